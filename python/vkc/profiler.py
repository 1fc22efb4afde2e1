"""The per-dispatch GPU timings of profiled runs as a Chrome trace (chrome://tracing, Perfetto),
in the form ONNX Runtime's profiler writes: a JSON list of complete events (ph 'X') with name,
cat, ts and dur in microseconds, pid, tid and args."""

import json
import os
import threading
import time


class Profiler:
    def __init__(self, prefix):
        self.prefix = prefix
        self.start = time.perf_counter()
        self.events = []
        self.lock = threading.Lock()
        self.runs = 0

    def record(self, run_start, run_end, timings):
        """One run: a 'model_run' event (wall clock) and one 'Node' event per dispatch, laid end
        to end from the run's start (the GPU times each dispatch; their gaps are not measured)."""
        tid = threading.get_ident() & 0x7FFFFFFF
        ts = (run_start - self.start) * 1e6
        with self.lock:
            run = self.runs
            self.runs += 1
            self.events.append({"cat": "Session", "name": "model_run", "ph": "X", "ts": round(ts, 3),
                                "dur": round((run_end - run_start) * 1e6, 3), "pid": os.getpid(), "tid": tid,
                                "args": {"run": run}})
            for name, ms, gflops, gbps in timings:
                dur = ms * 1e3
                self.events.append({"cat": "Node", "name": name, "ph": "X", "ts": round(ts, 3),
                                    "dur": round(dur, 3), "pid": os.getpid(), "tid": tid,
                                    "args": {"op_name": name, "run": run, "provider": "VkcVulkanExecutionProvider",
                                             "gflops": gflops, "gbps": gbps}})
                ts += dur

    def write(self):
        """Writes PREFIX_YYYY-MM-DD_HH-MM-SS.json and returns its path."""
        path = "%s_%s.json" % (self.prefix, time.strftime("%Y-%m-%d_%H-%M-%S"))
        with self.lock:
            events = list(self.events)
        with open(path, "w") as f:
            json.dump(events, f, indent=0)
        return path
