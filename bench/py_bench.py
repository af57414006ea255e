#!/usr/bin/python3
"""py_bench.py: the Python package's side of nnnbench's "python" section: the
per-call time of nnnkit.Plan.run, set against nnn_plan_run on the same file
(the issue's target: at batch 1, less than 5 us above the C call).

  py_bench.py --worker --shape 28,28,1 [--library FILE] MODEL
      one line per request on stdin, one answer per line on stdout, a
      "ready ..." line first:
        check X Y   -> largest |Plan.run(X) - Y| (X, Y: .npy files, Y from
                       nnn_plan_run); X becomes the input of the timed calls
        plan N      -> seconds for N calls of plan.run(x) (a new output each)
        plan-out N  -> seconds for N calls of plan.run(x, out=y)
        raw N       -> seconds for N calls of nnn_plan_run through ctypes, every
                       argument made beforehand (the plan's own handle): the
                       floor of any call from Python, for comparison
        quit
--shape: one input's shape (the batch is 1). --library: the libnnn the
package loads (NNN_LIBRARY); its plugins are found beside it. The package is
the one of this source tree (../python). Use /usr/bin/python3 (numpy).
"""
import os
import sys
import time


def worker(model_path, shape):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import numpy as np
    import nnnkit

    model = nnnkit.load(model_path)
    plan = model.plan((1,) + tuple(shape), threads=1)
    x = np.zeros((1,) + tuple(shape), np.float32)
    y = np.empty(plan.output_shape, np.float32)
    print("ready nnnkit %s, numpy %s, python %d.%d.%d" % ((nnnkit.__version__, np.__version__) + sys.version_info[:3]),
          flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w or w[0] == "quit":
            break
        try:
            if w[0] == "check":
                x = np.ascontiguousarray(np.load(w[1]), np.float32)
                want = np.load(w[2])
                got = plan.run(x)
                if got.shape != want.shape:
                    raise ValueError("Plan.run gives %s, nnn_plan_run %s" % (list(got.shape), list(want.shape)))
                print("%.6g" % float(np.max(np.abs(got - want))), flush=True)
            elif w[0] == "raw":
                # The package's internals, on purpose: the bare C call as Plan.run makes it.
                n, run = int(w[1]), nnnkit._lib.lib.nnn_plan_run
                args = (plan._h.ptr, x.ctypes.data, y.ctypes.data, None)
                t0 = time.perf_counter()
                for _ in range(n):
                    run(*args)
                t = time.perf_counter() - t0
                print("%.9f" % t, flush=True)
            elif w[0] in ("plan", "plan-out"):
                n, run = int(w[1]), plan.run  # the bound method once: the loop is the caller's cost
                if w[0] == "plan":
                    t0 = time.perf_counter()
                    for _ in range(n):
                        run(x)
                    t = time.perf_counter() - t0
                else:
                    t0 = time.perf_counter()
                    for _ in range(n):
                        run(x, out=y)
                    t = time.perf_counter() - t0
                print("%.9f" % t, flush=True)
            else:
                print("err unknown request %s" % w[0], flush=True)
        except Exception as e:  # the driver shows it and goes on without these rows
            print("err %s: %s" % (type(e).__name__, str(e).replace("\n", " ")), flush=True)
    plan.close()
    model.close()


def main(argv):
    shape, files, mode = None, [], None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--worker":
            mode = "worker"
        elif a in ("--shape", "--library") and i + 1 < len(argv):
            i += 1
            if a == "--shape":
                shape = [int(d) for d in argv[i].split(",")]
            else:
                os.environ["NNN_LIBRARY"] = argv[i]
        elif a.startswith("-"):
            sys.exit("py_bench.py: unknown option %s\n%s" % (a, __doc__))
        else:
            files.append(a)
        i += 1
    if mode != "worker" or len(files) != 1 or not shape:
        sys.exit(__doc__)
    worker(files[0], shape)


if __name__ == "__main__":
    main(sys.argv)
