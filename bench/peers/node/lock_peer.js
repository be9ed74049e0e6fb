// SPDX-License-Identifier: BSL-1.0
// The contend loop written with the npm `consul` client, run by conclave-bench as a peer on
// the same agent.
//
// Each contender is an async loop with its own client and session, as separate services
// would be: PUT ?acquire; when refused, blocking GETs of the key until it has no holder, then
// try again; hold; PUT ?release. Timestamps are CLOCK_MONOTONIC (process.hrtime), the clock
// conclave-bench uses. Output: one JSON line per grant, then a summary line.
"use strict";
const { EventEmitter } = require("events");
const Consul = require("consul");

const LOCK_FLAGS = "3304740253564472344"; // Go api.Lock's flags (beyond 2^53: a string)

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  return out;
}

const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sleepUntil = (t) => sleep(Math.max(0, Number(t - now()) / 1e6));
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function main() {
  const a = args();
  const [host, port] = a.addr.split(":");
  const contenders = Number(a.contenders || 1);
  const keys = Number(a.keys || 1);
  // The window, from the moment every contender has its session: the contenders start
  // lead-ns after it, the measurement begins warmup-ns later and lasts duration-ns.
  const lead = BigInt(a["lead-ns"]);
  const warmup = BigInt(a["warmup-ns"]);
  const duration = BigInt(a["duration-ns"]);
  let start, t0, t1;
  const holdMs = Number(a["hold-us"] || 0) / 1000;
  const grants = [];
  const errors = [];
  const cpu = {};

  // Blocking reads need the X-Consul-Index header: ask for the response too (one context
  // per request: the client adds a listener to it for each call).
  const withResponse = () => {
    const ctx = new EventEmitter();
    ctx.includeResponse = true;
    return ctx;
  };

  async function session(c) {
    const s = await c.session.create({ name: "bench-node", lockdelay: "0s", checks: [], ttl: "60s" });
    return s.ID;
  }

  async function contender(i, c, sid) {
    const key = `${a.prefix}/k${i % keys}`;
    await sleepUntil(start);
    while (now() < t1) {
      const st = now();
      let index;
      while (!(await c.kv.set({ key, value: "node", acquire: sid, flags: LOCK_FLAGS }))) {
        for (;;) {
          const opts = { key, ctx: withResponse(), wait: "15s" };
          if (index !== undefined) opts.index = index;
          const [res, entry] = await c.kv.get(opts);
          index = res.headers["x-consul-index"];
          if (!entry || !entry.Session) break;
        }
      }
      const acquired = now();
      if (holdMs) await sleep(holdMs);
      await c.kv.set({ key, value: "node", release: sid, flags: LOCK_FLAGS });
      grants.push([i, i % keys, st, acquired, now()]);
    }
    await c.session.destroy(sid);
  }

  const clients = [];
  for (let i = 0; i < contenders; i++) clients.push(new Consul({ host, port: Number(port) }));
  const sids = await Promise.all(
    clients.map((c) => session(c).catch((e) => errors.push(`${e.name}: ${e.message}`)))
  );
  // Every session created: the window starts now, however long node, its modules and the
  // sessions took, and the harness learns it from the first line.
  start = now() + lead;
  t0 = start + warmup;
  t1 = t0 + duration;
  process.stdout.write(JSON.stringify({ window: [String(start), String(t0), String(t1)] }) + "\n");
  const samplers = [
    sleepUntil(t0).then(() => (cpu.t0 = cpuUs())),
    sleepUntil(t1).then(() => (cpu.t1 = cpuUs())),
  ];
  const runs = [];
  if (!errors.length)
    for (let i = 0; i < contenders; i++)
      runs.push(contender(i, clients[i], sids[i]).catch((e) => errors.push(`${e.name}: ${e.message}`)));
  await Promise.all(runs.concat(samplers));
  const lines = grants.map((g) => `{"grant":[${g.map(String).join(",")}]}`);
  const summary = { cpu_us: (cpu.t1 || 0) - (cpu.t0 || 0), grants: grants.length, impl: "node-consul 2.0.1" };
  if (errors.length) summary.error = errors[0];
  lines.push(JSON.stringify({ summary }));
  process.stdout.write(lines.join("\n") + "\n");
  process.exitCode = errors.length ? 1 : 0;
}

main();
