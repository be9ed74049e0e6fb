#!/usr/bin/env python3
# SPDX-License-Identifier: BSL-1.0
"""Unit tests of check.py on small synthetic histories: what passes, and that each kind of
violation is caught.   python3 test/chaos/check_test.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check  # noqa: E402

KEY = "p/.lock"
RW = "p"  # a read-write lock's key (its tokens name the prefix itself)
S = 1_000_000_000  # ns


class History:
    """Builds histories; the store decides the writes in time order, like fence.py (or as
    forced by `decide`)."""

    def __init__(self):
        self.runs, self.holds, self.fence, self.events, self.leaks = [], [], [], [], []
        self.pending = []  # (time, run, epoch, index, key, forced answer or None, record)

    def hold(self, run, index, start, end, writes, epoch=0, status=0, signal=None,
             key=KEY, decide=None, mode=None):
        """writes: times (s) of the hold's writes (reads for mode "shared"); mode: None for
        a plain lock, "shared" or "exclusive" for a read-write lock (key RW)."""
        if mode is not None and key == KEY:
            key = RW
        token = f"{index}:{0 if mode else 1}:sess-{run}:{key}"
        run_record = {"run": run, "key": key, "status": status,
                      "stderr": f"Attempting lock acquisition\nLock acquired ({token}), "
                                "starting child\n"}
        if mode:
            run_record["mode"] = mode
        self.runs.append(run_record)
        self.holds.append({"event": "start", "run": run, "start": start * S, "token": token})
        record = {"event": "end", "run": run, "start": start * S, "end": end * S,
                  "token": token, "epoch": epoch, "writes": []}
        if signal:
            record["signal"] = signal
        self.holds.append(record)
        op = "read" if mode == "shared" else "write"
        for i, t in enumerate(writes):
            self.pending.append((t, run, epoch, index, key, decide[i] if decide else None,
                                 record, op))
        return self

    def decide(self):
        highest = {}
        for t, run, epoch, index, key, forced, record, op in sorted(self.pending,
                                                                    key=lambda p: p[0]):
            ok = key not in highest or (epoch, index) >= highest[key]
            if forced is not None:
                ok = forced
            if ok and op == "write":
                highest[key] = max(highest.get(key, (epoch, index)), (epoch, index))
            record["writes"].append({"t0": t * S, "t1": t * S + 1000,
                                     "answer": "OK" if ok else "STALE", "final": False})
            self.fence.append({"t": t * S + 500, "run": run, "key": key, "epoch": epoch,
                               "index": index, "ok": ok, "op": op})
        self.pending = []

    def gave_up(self, run, message="Timeout during lock acquisition: 'p/.lock' was not free"):
        self.runs.append({"run": run, "key": KEY, "status": 1,
                          "stderr": f"Attempting lock acquisition\n{message}\n"})
        return self

    def pause(self, run, t0, t1):
        self.events.append({"kind": "pause", "run": run, "t0": t0 * S, "t1": t1 * S})
        return self

    def restart(self, t0, t1, loses_state=True, epoch=1):
        self.events.append({"kind": "restart", "t0": t0 * S, "t1": t1 * S,
                            "loses_state": loses_state, "epoch": epoch})
        return self

    def check(self, min_handoffs=1):
        self.decide()
        self.fence.sort(key=lambda d: d["t"])
        return check.check({"runs": self.runs, "holds": self.holds, "fence": self.fence,
                            "events": self.events, "leaks": self.leaks, "faults": 7,
                            "min_handoffs": min_handoffs})


class CheckTest(unittest.TestCase):
    def assertClean(self, report):
        self.assertTrue(report.ok(), "\n".join(report.lines()))

    def assertViolation(self, report, start):
        self.assertTrue(any(v.startswith(start) for v in report.violations),
                        "\n".join(report.lines()))

    def test_disjoint_holds_pass(self):
        h = History().hold("a", 10, 1, 2, [1.1, 1.5]).hold("b", 20, 3, 4, [3.1, 3.5])
        h.gave_up("c")
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.handoffs, 2)
        self.assertEqual(r.lines()[-1], "handoffs=2 faults=7 violations=0 leaked=0")
        self.assertEqual(r.counts["runs_not_acquired"], 1)

    def test_overlap_explained_by_pause_and_fenced(self):
        # a is paused from 1.2 to 60; b takes the lock at 50; a, resumed, writes at 60.1
        # and is refused.
        h = History().hold("a", 10, 1, 60.2, [1.1, 60.1], signal="SIGTERM")
        h.hold("b", 20, 50, 51, [50.1, 50.5]).pause("a", 1.2, 60)
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.counts["overlaps_pause"], 1)
        self.assertEqual(r.counts["stale_pause"], 1)
        self.assertEqual(r.handoffs, 1)  # a was signalled: not a completed hold

    def test_hung_command_lasts_until_it_is_gone(self):
        # a's command hung at 1.5 (session destroyed); conclave lock killed it at 6.5.
        def history(b_start):
            h = History().hold("a", 10, 1, 2, [1.1], status=3)
            h.decide()
            h.holds.pop()  # killed: no end line
            h.events.append({"kind": "hang", "run": "a", "t0": 1.5 * S, "t1": 6.5 * S})
            return h.hold("b", 20, b_start, b_start + 1, [b_start + 0.1]).check()
        self.assertClean(history(16))
        self.assertViolation(history(6), "overlap:")

    def test_overlap_without_pause_is_a_violation(self):
        h = History().hold("a", 10, 1, 3, [1.1]).hold("b", 20, 2, 4, [2.1])
        self.assertViolation(h.check(), "overlap:")

    def test_pause_after_the_overlap_began_does_not_explain_it(self):
        h = History().hold("a", 10, 1, 30, [1.1]).hold("b", 20, 2, 4, [2.1])
        h.pause("a", 3, 25)
        self.assertViolation(h.check(), "overlap:")

    def test_overlap_across_a_state_losing_restart(self):
        # The dev agent restarts at 5: a (epoch 0) still runs when b (epoch 1, index 3)
        # takes the lock on the empty agent; a's write after b's is refused.
        h = History().hold("a", 900, 1, 7, [1.1, 6.9], signal="SIGTERM")
        h.hold("b", 3, 6, 8, [6.1], epoch=1).restart(5, 5.5)
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.counts["overlaps_restart"], 1)
        # A grant of the old agent whose command started after the kill (it could not find
        # its session: epoch -1) overlaps a grant of the new one.
        h = History().hold("a", 900, 5.2, 7, [5.3, 6.9], epoch=-1)
        h.hold("b", 3, 6, 8, [6.1], epoch=1).restart(5, 5.5)
        self.assertClean(h.check())
        # Both grants of the old agent: the restart explains nothing.
        h = History().hold("a", 900, 1, 7, [1.1, 6.9], epoch=0)
        h.hold("b", 901, 5.2, 8, [5.3], epoch=-1).restart(5, 5.5)
        self.assertViolation(h.check(), "overlap:")
        # Both of the new agent.
        h = History().hold("a", 3, 6, 7, [6.1], epoch=1)
        h.hold("b", 5, 6.5, 8, [6.6], epoch=1).restart(5, 5.5)
        self.assertViolation(h.check(), "overlap:")
        # A cluster restart keeps the state: no excuse.
        h = History().hold("a", 10, 1, 7, [1.1]).hold("b", 20, 6, 8, [6.1])
        h.restart(5, 5.5, loses_state=False)
        self.assertViolation(h.check(), "overlap:")

    def test_stale_write_accepted_is_a_violation(self):
        # The store (as logged) accepted a's write after b's higher token: both views of
        # the fence report it.
        h = History().hold("a", 10, 1, 60.2, [1.1, 60.1], decide=[True, True])
        h.hold("b", 20, 50, 51, [50.1], decide=[True]).pause("a", 1.2, 60)
        r = h.check()
        self.assertViolation(r, "fencing: store accepted a")
        self.assertViolation(r, "fencing: a (0, 10) got OK after b")

    def test_grant_order(self):
        # b started after a ended, yet has the lower token.
        h = History().hold("a", 20, 1, 2, [1.1]).hold("b", 10, 3, 4, [3.1], decide=[True])
        self.assertViolation(h.check(), "grant order:")

    def test_acquisition_after_cancellation(self):
        h = History().hold("a", 10, 1, 2, [1.1])
        h.runs[0]["stderr"] = "Timeout during lock acquisition\n" + h.runs[0]["stderr"]
        self.assertViolation(h.check(), "cancelled:")
        # A write by a run that said it was interrupted while waiting.
        h = History().gave_up("c", "Shutdown triggered during lock acquisition")
        h.fence.append({"t": 5 * S, "run": "c", "key": KEY, "epoch": 0, "index": 3, "ok": True})
        self.assertViolation(h.check(), "cancelled:")

    def test_harness_problems_and_leaks(self):
        h = History().hold("a", 10, 1, 2, [1.1])
        h.runs[0]["stderr"] = "Lock acquired (9:1:x:p/.lock)"  # not the token it ran with
        h.leaks.append({"what": "key", "key": KEY, "when": "at the end"})
        r = h.check()
        self.assertFalse(r.ok())
        self.assertTrue(any("did not report acquiring" in p for p in r.problems))
        self.assertEqual(r.lines()[-1], "handoffs=1 faults=7 violations=0 leaked=1")
        self.assertFalse(History().hold("a", 10, 1, 2, [1.1]).check(min_handoffs=5).ok())

    def test_unfinished_hold_ends_at_its_last_decision(self):
        h = History().hold("a", 10, 1, 2, [1.1, 9])
        h.decide()
        h.holds.pop()  # no end line: killed before writing it
        h.runs[0]["status"] = 3
        h.hold("b", 20, 5, 6, [5.1])  # a's write at 9 came after b's: refused
        r = h.check()
        self.assertViolation(r, "overlap:")  # a (until 9) overlaps b, and no pause explains it


    # --- read-write locks (conclave lock -shared / -exclusive) ---------------------------

    def test_rw_clean_history_passes(self):
        # Readers together, then a writer alone, then a reader (in line after the writer:
        # a higher token) and a second writer. r1 (10) and r2 (11) overlap; r0 (9), in
        # line before them, noticed late that it holds: it starts after r1 ended, with a
        # lower token (no grant order between readers), and overlaps r2.
        h = History().hold("r1", 10, 1, 3, [1.1, 2.5], mode="shared")
        h.hold("r2", 11, 2, 4, [2.1, 3.5], mode="shared")
        h.hold("r0", 9, 3.5, 4.2, [3.6], mode="shared")
        h.hold("w1", 12, 5, 6, [5.1, 5.5], mode="exclusive")
        h.hold("r3", 13, 7, 8, [7.1], mode="shared")
        h.hold("w2", 14, 9, 10, [9.1], mode="exclusive")
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.counts["shared_overlaps"], 2)  # r1-r2, r2-r0
        self.assertEqual(r.counts["reads_ok"], 6)
        self.assertEqual(r.counts["writes_ok"], 3)
        self.assertEqual(r.handoffs, 6)

    def test_rw_shared_overlapping_exclusive_is_a_violation(self):
        # The writer came first (lower token) and still holds when a reader starts.
        h = History().hold("w", 10, 1, 3, [1.1, 2.9], mode="exclusive")
        h.hold("r", 11, 2, 4, [2.1], mode="shared")
        self.assertViolation(h.check(), "overlap:")
        # The reader came first, a writer starts while it holds.
        h = History().hold("r", 10, 1, 3, [1.1, 2.9], mode="shared")
        h.hold("w", 11, 2, 4, [2.1], mode="exclusive")
        r = h.check()
        self.assertViolation(r, "overlap:")
        # r's read at 2.9 came after w's write at 2.1 with a higher token: refused (the
        # store); had it been accepted, both views of the fence report it.
        self.assertEqual(r.counts["reads_stale"], 1)
        h = History().hold("r", 10, 1, 3, [1.1, 2.9], mode="shared", decide=[True, True])
        h.hold("w", 11, 2, 4, [2.1], mode="exclusive")
        r = h.check()
        self.assertViolation(r, "fencing: store accepted a read of r")
        self.assertViolation(r, "fencing: r (0, 10) got OK after w")

    def test_rw_two_exclusive_overlapping_is_a_violation(self):
        h = History().hold("w1", 10, 1, 3, [1.1], mode="exclusive")
        h.hold("w2", 11, 2, 4, [2.1], mode="exclusive")
        self.assertViolation(h.check(), "overlap:")

    def test_rw_paused_writer_overtaken_by_readers_is_fenced(self):
        # w is paused from 1.2 to 60; its session expires, readers take the lock at 40 and
        # a writer after them; w, resumed, writes at 60.1 and is refused.
        h = History().hold("w", 10, 1, 60.2, [1.1, 60.1], signal="SIGTERM", mode="exclusive")
        h.pause("w", 1.2, 60)
        h.hold("r1", 20, 40, 42, [40.1], mode="shared")
        h.hold("r2", 21, 41, 43, [41.1], mode="shared")
        h.hold("w2", 22, 50, 51, [50.1], mode="exclusive")
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.counts["overlaps_pause"], 3)
        self.assertEqual(r.counts["stale_pause"], 1)
        # Accepted, it is a violation.
        h = History().hold("w", 10, 1, 60.2, [1.1, 60.1], mode="exclusive",
                           decide=[True, True]).pause("w", 1.2, 60)
        h.hold("w2", 22, 50, 51, [50.1], mode="exclusive")
        self.assertViolation(h.check(), "fencing: store accepted w")

    def test_rw_paused_reader_overtaken_by_a_writer_is_fenced(self):
        h = History().hold("r", 10, 1, 60.2, [1.1, 60.1], signal="SIGTERM", mode="shared")
        h.pause("r", 1.2, 60).hold("w", 20, 50, 51, [50.1], mode="exclusive")
        r = h.check()
        self.assertClean(r)
        self.assertEqual(r.counts["stale_read_pause"], 1)

    def test_rw_grant_order(self):
        # A writer that started after a reader had ended has the lower token.
        h = History().hold("r", 20, 1, 2, [1.1], mode="shared")
        h.hold("w", 10, 3, 4, [3.1], mode="exclusive", decide=[True])
        self.assertViolation(h.check(), "grant order:")
        h = History().hold("w", 20, 1, 2, [1.1], mode="exclusive")
        h.hold("r", 10, 3, 4, [3.1], mode="shared", decide=[True])
        self.assertViolation(h.check(), "grant order:")


if __name__ == "__main__":
    unittest.main()
