// SPDX-License-Identifier: BSL-1.0
// conclave-bench's command line: which scenarios, against which agent, with what sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace conclave::bench {

struct options {
    std::vector<std::string> scenarios; ///< in the order given; "all" expands
    std::string agent = "process"; ///< process | embedded | consul | consul-cluster | HOST:PORT
    std::string consul_bin;        ///< --agent consul*: the Consul to start (CONSUL_BIN)
    std::string go_peer;           ///< golock executable; "none": no Go peer
    double duration_s = 3.0;       ///< measured time of a timed run
    double warmup_fraction = 0.1;  ///< discarded before measuring
    std::vector<std::size_t> contenders{}; ///< N values (contend, semaphore, drain); empty: default
    std::vector<std::size_t> writers{};    ///< rwlock: W writers beside the readers; empty: default
    std::size_t keys = 0;                  ///< K keys (0: per scenario, see key_count)
    std::size_t processes = 1;             ///< P worker processes for contend
    std::size_t limit = 4;                 ///< semaphore limit L
    std::size_t slots = 1;                 ///< semaphore: slots per acquire
    std::size_t watchers = 16;             ///< M watchers
    std::size_t waiters = 10000;           ///< scale: waiting contenders
    std::size_t connections = 0;           ///< client pool bound (0: per scenario)
    std::size_t repeat = 3;                ///< failover: crashes and resigns measured
    long hold_us = 0;                      ///< time a holder keeps the lock
    long ttl_ms = 1000;                    ///< failover: session TTL
    long lock_delay_ms = 250;              ///< failover: session lock-delay
    long health_ttl_ms = 250;              ///< failover: the crash-health holder's check TTL
    bool monitor = true;                   ///< cycle: watch the lease while held
    bool fair = false;                     ///< lock fair mode (when the library has one)
    std::optional<unsigned> local_turn;    ///< lock_options::local_turn (else the default)
    std::vector<std::string> peers{"python", "node"}; ///< peers run next to contend
    bool json = false;
    bool csv = false;
    bool quiet = false; ///< no summary table
    std::string plot_dir;
};

/// Parses argv; prints usage and exits on --help or an error.
options parse_options(int argc, char** argv);

/// The scenarios "all" stands for, in run order.
const std::vector<std::string>& all_scenarios();

} // namespace conclave::bench
