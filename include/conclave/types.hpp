// SPDX-License-Identifier: BSL-1.0
/// \file
/// Every value exchanged with Consul's HTTP API, one header per concept in conclave/consul/:
/// request options and metadata, KV, sessions, transactions, the agent.
#pragma once

#include <conclave/consul/agent.hpp>
#include <conclave/consul/kv.hpp>
#include <conclave/consul/request.hpp>
#include <conclave/consul/session.hpp>
#include <conclave/consul/txn.hpp>
