// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/store/radix.hpp"

#include <algorithm>

namespace conclave::dev::detail {

struct radix_tree::node {
    std::uint64_t ch = 0;
    std::string prefix;
    bool leaf = false;
    std::uint64_t leaf_ch = 0;
    std::vector<std::unique_ptr<node>> edges; ///< sorted by the first byte of their prefix

    node* edge(unsigned char label) const {
        auto it = std::lower_bound(edges.begin(), edges.end(), label, [](const auto& e, auto l) {
            return static_cast<unsigned char>(e->prefix[0]) < l;
        });
        if (it != edges.end() && static_cast<unsigned char>((*it)->prefix[0]) == label)
            return it->get();
        return nullptr;
    }
    void add_edge(std::unique_ptr<node> n) {
        const auto label = static_cast<unsigned char>(n->prefix[0]);
        auto it = std::lower_bound(edges.begin(), edges.end(), label, [](const auto& e, auto l) {
            return static_cast<unsigned char>(e->prefix[0]) < l;
        });
        edges.insert(it, std::move(n));
    }
    void remove_edge(const node* child) {
        edges.erase(std::find_if(edges.begin(), edges.end(),
                                 [&](const auto& e) { return e.get() == child; }));
    }
};

namespace {

std::size_t common_prefix(std::string_view a, std::string_view b) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i])
        ++i;
    return i;
}

} // namespace

radix_tree::radix_tree(channel_source& channels)
    : ch_(channels)
    , root_(std::make_unique<node>()) {
    root_->ch = ch_.fresh();
}

radix_tree::~radix_tree() = default;

void radix_tree::write(node& n, bool leaf_update) {
    ch_.closed.push_back(n.ch);
    n.ch = ch_.fresh();
    if (leaf_update && n.leaf)
        ch_.closed.push_back(n.leaf_ch);
}

void radix_tree::merge_child(node& n) {
    std::unique_ptr<node> child = std::move(n.edges[0]);
    ch_.closed.push_back(child->ch);
    n.prefix += child->prefix;
    n.leaf = child->leaf;
    n.leaf_ch = child->leaf_ch;
    n.edges = std::move(child->edges);
}

void radix_tree::close_all(node& n) {
    ch_.closed.push_back(n.ch);
    if (n.leaf)
        ch_.closed.push_back(n.leaf_ch);
    for (auto& e : n.edges)
        close_all(*e);
}

std::size_t radix_tree::count_leaves(const node& n) const {
    std::size_t count = n.leaf ? 1 : 0;
    for (const auto& e : n.edges)
        count += count_leaves(*e);
    return count;
}

void radix_tree::insert(std::string_view key) {
    insert_at(*root_, key);
}

void radix_tree::insert_at(node& n, std::string_view search) {
    if (search.empty()) {
        const bool existed = n.leaf;
        write(n, true);
        n.leaf = true;
        n.leaf_ch = ch_.fresh();
        if (!existed)
            ++size_;
        return;
    }
    node* child = n.edge(static_cast<unsigned char>(search[0]));
    if (child == nullptr) {
        auto fresh = std::make_unique<node>();
        fresh->ch = ch_.fresh();
        fresh->prefix = std::string(search);
        fresh->leaf = true;
        fresh->leaf_ch = ch_.fresh();
        write(n, false);
        n.add_edge(std::move(fresh));
        ++size_;
        return;
    }
    const std::size_t common = common_prefix(search, child->prefix);
    if (common == child->prefix.size()) {
        insert_at(*child, search.substr(common));
        write(n, false);
        return;
    }
    // Split the edge: a new inner node takes the common part.
    write(n, false);
    auto split = std::make_unique<node>();
    split->ch = ch_.fresh();
    split->prefix = std::string(search.substr(0, common));
    write(*child, false);
    std::unique_ptr<node> old_child;
    for (auto& e : n.edges)
        if (e.get() == child)
            old_child = std::move(e);
    n.remove_edge(nullptr);
    old_child->prefix.erase(0, common);
    split->add_edge(std::move(old_child));
    const std::string_view rest = search.substr(common);
    if (rest.empty()) {
        split->leaf = true;
        split->leaf_ch = ch_.fresh();
    } else {
        auto leaf = std::make_unique<node>();
        leaf->ch = ch_.fresh();
        leaf->prefix = std::string(rest);
        leaf->leaf = true;
        leaf->leaf_ch = ch_.fresh();
        split->add_edge(std::move(leaf));
    }
    n.add_edge(std::move(split));
    ++size_;
}

bool radix_tree::erase(std::string_view key) {
    return erase_at(*root_, true, key) == del_result::changed;
}

radix_tree::del_result radix_tree::erase_at(node& n, bool is_root, std::string_view search) {
    if (search.empty()) {
        if (!n.leaf)
            return del_result::not_found;
        write(n, true);
        n.leaf = false;
        --size_;
        if (!is_root && n.edges.size() == 1)
            merge_child(n);
        return del_result::changed;
    }
    node* child = n.edge(static_cast<unsigned char>(search[0]));
    if (child == nullptr || !search.starts_with(child->prefix))
        return del_result::not_found;
    if (erase_at(*child, false, search.substr(child->prefix.size())) == del_result::not_found)
        return del_result::not_found;
    return erased_below(n, is_root, child);
}

radix_tree::del_result radix_tree::erased_below(node& n, bool is_root, node* child) {
    write(n, false);
    if (!child->leaf && child->edges.empty()) {
        n.remove_edge(child);
        if (!is_root && n.edges.size() == 1 && !n.leaf)
            merge_child(n);
    }
    return del_result::changed;
}

bool radix_tree::erase_prefix(std::string_view prefix) {
    return erase_prefix_at(*root_, true, prefix) == del_result::changed;
}

radix_tree::del_result radix_tree::erase_prefix_at(node& n, bool is_root, std::string_view search) {
    if (search.empty()) {
        write(n, true);
        size_ -= count_leaves(n);
        for (auto& e : n.edges)
            close_all(*e);
        n.leaf = false;
        n.edges.clear();
        return del_result::changed;
    }
    node* child = n.edge(static_cast<unsigned char>(search[0]));
    if (child == nullptr ||
        (!child->prefix.starts_with(search) && !search.starts_with(child->prefix)))
        return del_result::not_found;
    const std::string_view rest = child->prefix.size() > search.size()
                                      ? std::string_view{}
                                      : search.substr(child->prefix.size());
    if (erase_prefix_at(*child, false, rest) == del_result::not_found)
        return del_result::not_found;
    return erased_below(n, is_root, child);
}

void radix_tree::clear() {
    close_all(*root_);
    root_ = std::make_unique<node>();
    root_->ch = ch_.fresh();
    size_ = 0;
}

std::uint64_t radix_tree::watch_key(std::string_view key) const {
    const node* n = root_.get();
    std::uint64_t watch = n->ch;
    std::string_view search = key;
    for (;;) {
        if (search.empty()) {
            if (n->leaf)
                return n->leaf_ch;
            break;
        }
        const node* child = n->edge(static_cast<unsigned char>(search[0]));
        if (child == nullptr)
            break;
        watch = child->ch;
        n = child;
        if (!search.starts_with(n->prefix))
            break;
        search.remove_prefix(n->prefix.size());
    }
    return watch;
}

std::uint64_t radix_tree::watch_prefix(std::string_view prefix) const {
    const node* n = root_.get();
    std::uint64_t watch = n->ch;
    std::string_view search = prefix;
    for (;;) {
        if (search.empty())
            return watch;
        const node* child = n->edge(static_cast<unsigned char>(search[0]));
        if (child == nullptr)
            return watch;
        watch = child->ch;
        if (!search.starts_with(child->prefix))
            return watch;
        search.remove_prefix(child->prefix.size());
        n = child;
    }
}

} // namespace conclave::dev::detail
