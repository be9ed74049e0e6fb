// SPDX-License-Identifier: BSL-1.0
// The shape of go-immutable-radix trees, kept only to decide which blocking queries a write
// wakes. Consul's state store (go-memdb) hands a blocking query the "mutate channel" of the
// radix node its lookup ended on; a write closes the channels of every node it copies. That
// is why, in Consul 1.8, a watch on a missing key wakes on writes next to it in the key tree
// but not on writes elsewhere. Here a channel is a number: a write "closes" a number by
// reporting it and giving the node a fresh one. Sans-I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::dev::detail {

/// Channel numbers are unique across every tree sharing one generator.
struct channel_source {
    std::uint64_t next = 1;
    std::vector<std::uint64_t> closed; ///< collected until the store publishes them
    std::uint64_t fresh() { return next++; }
};

class radix_tree {
public:
    explicit radix_tree(channel_source& channels);
    ~radix_tree();
    radix_tree(const radix_tree&) = delete;
    radix_tree& operator=(const radix_tree&) = delete;

    /// Inserts or updates a key (iradix Txn.Insert).
    void insert(std::string_view key);
    /// Deletes a key; false if absent (iradix Txn.Delete).
    bool erase(std::string_view key);
    /// Deletes every key with this prefix; false if none (iradix Txn.DeletePrefix).
    bool erase_prefix(std::string_view prefix);
    /// Closes every channel and empties the tree (a snapshot restore).
    void clear();

    /// The channel a point lookup waits on (iradix GetWatch): the key's leaf channel if it
    /// exists, else the channel of the deepest node the search reached.
    std::uint64_t watch_key(std::string_view key) const;
    /// The channel a prefix iteration waits on (iradix Iterator.SeekPrefixWatch).
    std::uint64_t watch_prefix(std::string_view prefix) const;

    std::size_t size() const { return size_; }

private:
    struct node;
    enum class del_result { not_found, changed };

    channel_source& ch_;
    std::unique_ptr<node> root_;
    std::size_t size_ = 0;

    void write(node& n, bool leaf_update);
    void merge_child(node& n);
    void close_all(node& n);
    std::size_t count_leaves(const node& n) const;
    void insert_at(node& n, std::string_view search);
    del_result erase_at(node& n, bool is_root, std::string_view search);
    del_result erase_prefix_at(node& n, bool is_root, std::string_view search);
    /// What erase_at and erase_prefix_at do to `n` once they erased below its `child`.
    del_result erased_below(node& n, bool is_root, node* child);
};

} // namespace conclave::dev::detail
