// SPDX-License-Identifier: BSL-1.0
#include "consul/blocking/shared_key_read.hpp"
#include "consul/blocking/stall_pacing.hpp"
#include "consul/endpoints/kv.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <list>

namespace conclave::detail {

using clock = std::chrono::steady_clock;

/// One folder's shared blocking query and the readers waiting on it.
class folder_read : public std::enable_shared_from_this<folder_read> {
public:
    folder_read(std::shared_ptr<client_impl> c, std::string name, std::string folder,
                const query_options& q)
        : client_(std::move(c))
        , name_(std::move(name))
        , folder_(std::move(folder))
        , mode_(q.mode)
        , datacenter_(q.datacenter) {}

    asio::awaitable<shared_read> read(std::string key, query_options q) {
        auto self = shared_from_this();
        reader r{client_->executor, std::move(key), q.index, query_wait(q.wait)};
        if (snapshot_ && changed(r))
            co_return answer_of(r);
        const auto pos = readers_.insert(readers_.end(), &r);
        ++client_->shared_key_reads;
        if (!running_) {
            running_ = true;
            // (run() never throws: a bare detached is fine)
            asio::co_spawn(client_->executor, run(self),
                           asio::bind_cancellation_slot(stop_.slot(), [](std::exception_ptr) {}));
        }
        auto [ec] = co_await r.timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (r.answered) { // (the query took it off the list)
            if (r.result.ec && q.diag)
                *q.diag = std::move(r.diag);
            co_return std::move(r.result);
        }
        readers_.erase(pos);
        --client_->shared_key_reads;
        // Nobody needs the query now. Consul keeps counting its connection until its wait
        // ends (the pool keeps the slot as long), but the program's io_context need not.
        if (readers_.empty() && running_)
            stop_.emit(asio::cancellation_type::terminal);
        if (ec) // cancelled by the caller
            co_return shared_read{
                shared_read::outcome::answered, asio::error::operation_aborted, {}};
        // The reader's wait is over with no change: as Consul, answer with the key as it is.
        // (A missing key's index is the KV table's, which only a read of the key gives.)
        co_return shared_read{shared_read::outcome::wait_over, {}, {}};
    }

private:
    struct reader {
        reader(const asio::any_io_executor& ex, std::string k, std::uint64_t i,
               std::chrono::milliseconds wait)
            : key(std::move(k))
            , index(std::max<std::uint64_t>(i, 1))
            , wait(wait)
            , timer(ex, wait) {}
        std::string key;
        std::uint64_t index;
        std::chrono::milliseconds wait;
        asio::steady_timer timer; // the end of the reader's wait
        bool answered = false;
        shared_read result;
        diagnostics diag; // with a failure
    };

    const kv_entry* find(const std::string& key) const {
        const auto it =
            std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const kv_entry& e, const std::string& k) { return e.key < k; });
        return it != entries_.end() && it->key == key ? &*it : nullptr;
    }

    // A GET of the key would report the entry's ModifyIndex; for a missing key, an index
    // at least the folder's: whether that has passed the reader's.
    bool changed(const reader& r) const {
        const kv_entry* e = find(r.key);
        return (e ? e->modify_index : index_) > r.index;
    }

    shared_read answer_of(const reader& r) const {
        shared_read out;
        out.result.meta = meta_;
        if (const kv_entry* e = find(r.key)) {
            out.result.entry = *e;
            out.result.meta.index = e->modify_index;
        } else {
            out.result.meta.index = index_;
        }
        return out;
    }

    // Answers the readers the new snapshot concerns (all of them when the index went
    // backwards: Consul's history was replaced, and their indexes are from before).
    void answer(bool everyone) {
        for (auto it = readers_.begin(); it != readers_.end();) {
            reader& r = **it;
            if (!everyone && !changed(r)) {
                ++it;
                continue;
            }
            r.result = answer_of(r);
            finish(r);
            it = readers_.erase(it);
        }
    }

    void end_all(shared_read::outcome how, const error_code& ec) {
        for (reader* r : readers_) {
            r->result = shared_read{how, ec, {}};
            r->diag = diag_;
            r->diag.client_message += (r->diag.client_message.empty() ? "" : " ");
            r->diag.client_message +=
                "(a blocking read of " + r->key + ", shared with the others under " + folder_ + ")";
            finish(*r);
        }
        readers_.clear();
    }

    void finish(reader& r) {
        r.answered = true;
        r.timer.cancel();
        --client_->shared_key_reads;
    }

    // Refusals a read of the key itself would not meet: the folder's list may need a
    // permission its keys do not (ACL key list), or be larger than any reply accepted.
    static bool folder_only_failure(const error_code& ec, unsigned status) {
        return status == 403 || ec == boost::beast::http::error::body_limit;
    }

    static asio::awaitable<void> run(std::shared_ptr<folder_read> self) {
        // A cancellation (stop_) must not make any later await throw: loop() looks at
        // what each read returned, and this cleanup must run.
        co_await asio::this_coro::throw_if_cancelled(false);
        ++self->client_->shared_folder_queries;
        try {
            co_await self->loop();
        } catch (const std::exception&) {
            self->end_all(shared_read::outcome::not_shareable, {});
        }
        --self->client_->shared_folder_queries;
        self->running_ = false;
        self->snapshot_ = false; // it no longer follows the folder
        const auto it = self->client_->folder_reads.find(self->name_);
        if (it != self->client_->folder_reads.end() && it->second.lock() == self)
            self->client_->folder_reads.erase(it);
    }

    asio::awaitable<void> loop() {
        while (!readers_.empty()) {
            query_options q;
            if (snapshot_) {
                q.index = index_;
                // As long as the longest wait among the readers: no longer than anyone
                // needs, since Consul counts an abandoned query until its wait ends.
                for (const reader* r : readers_)
                    q.wait = std::max(q.wait, r->wait);
            }
            q.mode = mode_;
            q.datacenter = datacenter_;
            diag_ = {};
            q.diag = &diag_;
            endpoint::kv_list read{folder_, q};
            api_call call = client_->new_call();
            read.build(call); // (the folder was checked with the key)
            const auto started = clock::now();
            auto [ec, reply] = co_await client_->send(call);
            auto cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none) {
                // Every reader left (readers who came since need the query again).
                co_await asio::this_coro::reset_cancellation_state();
                if (ec == asio::error::operation_aborted)
                    continue;
            }
            kv_list_result list;
            if (!ec)
                std::tie(ec, list) = read.decode(call, reply);
            if (ec && folder_only_failure(ec, reply.status)) {
                client_->unshareable_folders.insert(folder_);
                end_all(shared_read::outcome::not_shareable, ec);
                co_return;
            }
            std::vector<kv_entry>& entries = list.entries;
            if (ec) {
                // The readers report it as their own read would, and their callers' loops
                // decide what comes next; a new query then starts from a plain read.
                snapshot_ = false;
                end_all(shared_read::outcome::answered, ec);
                co_return;
            }
            std::sort(entries.begin(), entries.end(),
                      [](const kv_entry& a, const kv_entry& b) { return a.key < b.key; });
            const std::uint64_t index = std::max<std::uint64_t>(reply.meta.index, 1);
            const bool backwards = snapshot_ && index < index_;
            entries_ = std::move(entries);
            index_ = index;
            meta_ = reply.meta;
            snapshot_ = true;
            answer(backwards);
            // Answered without news before the wait was over: the next query waits a
            // little (stall_pacing.hpp), or every reader leaving ends the pause.
            const auto next = pacing_.on_reply(q.index, index, q.wait, started, clock::now());
            if (next > clock::now() && !readers_.empty()) {
                asio::steady_timer pause{client_->executor, next};
                co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
                auto after = co_await asio::this_coro::cancellation_state;
                if (after.cancelled() != asio::cancellation_type::none)
                    co_await asio::this_coro::reset_cancellation_state();
            }
        }
    }

    std::shared_ptr<client_impl> client_;
    const std::string name_; // in client_impl::folder_reads
    const std::string folder_;
    const consistency mode_;
    const std::string datacenter_;

    std::list<reader*> readers_; // (they live in their read() frames)
    bool running_ = false;
    asio::cancellation_signal stop_;
    diagnostics diag_; // of the query in flight

    // The folder as the last answer gave it, sorted by key.
    bool snapshot_ = false;
    std::uint64_t index_ = 0;
    stall_pacing pacing_;
    query_meta meta_;
    std::vector<kv_entry> entries_;
};

std::optional<std::string_view> sharing_folder(std::string_view key) {
    const auto slash = key.rfind('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    return key.substr(0, slash + 1);
}

bool folder_shareable(const client_impl& c, const std::string& folder) {
    return c.unshareable_folders.count(folder) == 0;
}

asio::awaitable<shared_read> shared_key_read(std::shared_ptr<client_impl> c, std::string key,
                                             std::string folder, query_options q) {
    // One query per folder, consistency mode and datacenter.
    std::string name =
        std::to_string(static_cast<int>(q.mode)) + '\n' + q.datacenter + '\n' + folder;
    std::shared_ptr<folder_read> group = c->folder_reads[name].lock();
    if (!group) {
        group = std::make_shared<folder_read>(c, name, std::move(folder), q);
        c->folder_reads[name] = group;
    }
    co_return co_await group->read(std::move(key), std::move(q));
}

} // namespace conclave::detail
