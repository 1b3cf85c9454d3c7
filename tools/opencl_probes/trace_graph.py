#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads a log of cl_trace.c (libordo-cl-trace.so) and checks the OpenCL it records.

    trace_graph.py <trace>

Reports, for the whole log: wait-list entries that name an event the program no longer
holds (released or never made: invalid OpenCL), commands that wait for a command of
another queue (a dependency only a flush of that queue starts), and user events never
set. When the log has STALL lines (a wait that did not return), it prints each stalled
wait with the chain of commands behind it: every command, its queue, its status at the
stall, and whether its queue was flushed (or waited on, which flushes) after it was
enqueued. docs/opencl.md says what it showed for Ordo's hang on Intel's CPU runtime.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^(\d+) (\d+) ([\d.]+) (.*)$")
ENQ = re.compile(r"^(clEnqueue\w+) q=(0x[0-9a-f]+|\(nil\)) wait=\[([^\]]*)\] -> ev=(0x[0-9a-f]+|\(nil\)) ret=(-?\d+)")


class Command:
    def __init__(self, seq, tid, call, queue, waits):
        self.seq, self.tid, self.call, self.queue, self.waits = seq, tid, call, queue, waits
        self.flushed_after = False
        self.status = None

    def __str__(self):
        return f"#{self.seq} {self.call} tid={self.tid} q={self.queue}"


def main(path):
    live = {}  # handle -> Command currently named by that handle
    refs = defaultdict(int)
    commands, problems, cross_queue = [], [], []
    user_events = {}
    stall_waits, stall_status = [], {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            seq, tid, body = int(m.group(1)), m.group(2), m.group(4)
            e = ENQ.match(body)
            if e:
                call, q, wl, ev, ret = e.groups()
                waits = [w for w in wl.split(",") if w]
                deps = []
                for w in waits:
                    c = live.get(w)
                    if c is None:
                        problems.append(f"#{seq} {call} waits for {w}, which the program does not hold")
                    else:
                        deps.append(c)
                        if c.queue != q and c.queue != "user":
                            cross_queue.append(f"#{seq} {call} on {q} waits for {c} of another queue")
                if ret == "0" and ev != "(nil)":
                    cmd = Command(seq, tid, call, q, deps)
                    commands.append(cmd)
                    live[ev] = cmd
                    refs[ev] = 1
                continue
            if body.startswith("clCreateUserEvent"):
                ev = re.search(r"ev=(0x[0-9a-f]+)", body).group(1)
                cmd = Command(seq, tid, "clCreateUserEvent", "user", [])
                live[ev], refs[ev] = cmd, 1
                user_events[ev] = cmd
            elif body.startswith("clSetUserEventStatus"):
                user_events.pop(re.search(r"ev=(0x[0-9a-f]+)", body).group(1), None)
            elif body.startswith("clRetainEvent"):
                refs[body.split("ev=")[1].split()[0]] += 1
            elif body.startswith("clReleaseEvent"):
                ev = body.split("ev=")[1].split()[0]
                refs[ev] -= 1
                if refs[ev] <= 0:
                    live.pop(ev, None)
            elif body.startswith("BEGIN clWaitForEvents") or body.startswith("BEGIN clFinish") or \
                    body.startswith("clFlush") or body.startswith("BEGIN blocking"):
                # clWaitForEvents flushes the queues of its events; clFinish and clFlush theirs.
                queues = set(re.findall(r"q=(0x[0-9a-f]+)", body))
                for w in re.findall(r"0x[0-9a-f]+", body.split("[", 1)[1]) if "[" in body else []:
                    if w in live:
                        queues.add(live[w].queue)
                for c in commands:
                    if c.queue in queues and c.seq < seq:
                        c.flushed_after = True
            elif body.startswith("STALL wait"):
                stall_waits.append(body)
            elif body.startswith("STALL event"):
                parts = body.split()
                stall_status[parts[2]] = parts[3]

    print(f"{len(commands)} commands; {len(problems)} waits on events not held; "
          f"{len(cross_queue)} cross-queue dependencies; {len(user_events)} user events never set")
    for p in problems[:20] + cross_queue[:20]:
        print("  " + p)
    for u in user_events.values():
        print(f"  user event made at #{u.seq} never set")
    for w in stall_waits:
        print(w)
        for h in re.findall(r"0x[0-9a-f]+", w.split(":", 1)[1]):
            c = live.get(h)
            if c is None:
                continue
            todo, seen = [c], set()
            while todo:
                x = todo.pop()
                if x.seq in seen:
                    continue
                seen.add(x.seq)
                handle = next((k for k, v in live.items() if v is x), "?")
                print(f"    {x} status={stall_status.get(handle, 'released')} "
                      f"flushed_or_waited_after={x.flushed_after} waits_for={[d.seq for d in x.waits]}")
                todo.extend(x.waits)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
