"""Differential fuzzing: random programs through funcgrad and its oracle (JAX or PyTorch).

    python scripts/fuzz.py --face jax --programs 10000 --seed 0 --time-limit 3600 \\
        --out failures.jsonl

Program ``k`` of a run is drawn from the seed ``(seed, k)`` by the generator of
tests/support/fuzz_programs.py (JAX face: every transform, see ``TRANSFORMS`` there) or
tests/support/fuzz_torch_programs.py (torch face: values, dtypes, ``grad_fn`` names, first
and second derivatives). Each mismatch is shrunk greedily (drop ops, the wrapper, inputs,
shrink shapes, while it still fails the same way) and written as one JSON line: the program
as data, the transform, both results. Differences listed in docs/sharp_bits.md are skipped
and counted. The last line reads
``fuzz jax: 10000 programs, 0 mismatches (N documented differences skipped), seed S, T s``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT))

import fuzz_programs as fp  # noqa: E402

import funcgrad  # noqa: E402


def documented(prog: Any, bad: dict[str, Any]) -> str | None:
    """The docs/sharp_bits.md row (or reported open bug) a mismatch falls under, if any."""
    if isinstance(prog, fp.Prog):
        return fp.skip_reason(prog, bad)
    import fuzz_torch_programs as ftp

    return ftp.skip_reason(prog, bad)


# ------------------------------------------------------------------ the JAX face


def _jax_fails(prog: fp.Prog, transform: str) -> dict[str, Any] | None:
    try:
        bad = fp.check(prog, [transform])
    except Exception:  # JAX refuses the candidate, or it is not a valid program
        return None
    bad = [b for b in bad if documented(prog, b) is None]
    return bad[0] if bad else None


def _drop_op(prog: fp.Prog, i: int) -> fp.Prog:
    removed = len(prog.in_shapes) + i
    ops = []
    for op in prog.ops[:i] + prog.ops[i + 1:]:
        spec = fp.OPS[op[0]]
        if op[0] in fp.BINARY or op[0] == "matmul_partner":
            j = op[1]
            op = (op[0], j - 1 if j >= removed and j > 0 else j, *op[2:])
        del spec
        ops.append(op)
    return fp.Prog(prog.in_shapes, tuple(ops), prog.wrapper, prog.seed, prog.dtype)


def shrink_jax(prog: fp.Prog, bad: dict[str, Any], budget_s: float) -> tuple[fp.Prog, dict]:
    """Greedy: keep any smaller program that still fails the same transform."""
    t_end = time.monotonic() + budget_s
    transform = bad["transform"]
    changed = True
    while changed and time.monotonic() < t_end:
        changed = False
        candidates: list[fp.Prog] = []
        if prog.wrapper is not None:
            candidates.append(fp.Prog(prog.in_shapes, prog.ops, None, prog.seed, prog.dtype))
        candidates += [_drop_op(prog, i) for i in range(len(prog.ops)) if len(prog.ops) > 1]
        if prog.dtype == "float32":
            candidates.append(fp.Prog(prog.in_shapes, prog.ops, prog.wrapper, prog.seed))
        for k, s in enumerate(prog.in_shapes):
            for a, n in enumerate(s):
                if n > 1:
                    shapes = list(prog.in_shapes)
                    shapes[k] = s[:a] + (n - 1,) + s[a + 1:]
                    candidates.append(fp.Prog(tuple(shapes), prog.ops, prog.wrapper,
                                              prog.seed, prog.dtype))
        for cand in candidates:
            if time.monotonic() > t_end:
                break
            if transform not in fp.transforms_for(cand):
                continue
            still = _jax_fails(cand, transform)
            if still is not None:
                prog, bad, changed = cand, still, True
                break
    return prog, bad


def fuzz_jax(args: argparse.Namespace, out: Any) -> tuple[int, int, int, int]:
    done = mismatches = skipped = refused = 0
    t0 = last = time.monotonic()
    for k in range(args.start, args.start + args.programs):
        if time.monotonic() - t0 > args.time_limit:
            break
        prog = fp.draw_program(fp.RngDrawer(args.seed * 1_000_003 + k))
        try:
            bad = fp.check(prog)
        except fp.JaxRefused:
            refused += 1
            done += 1
            continue
        except Exception as e:  # funcgrad cannot even trace the shapes: a finding
            bad = [{"transform": "eval_shape", "error": f"{type(e).__name__}: {e}"[:2000]}]
        done += 1
        real = [b for b in bad if documented(prog, b) is None]
        skipped += len(bad) - len(real)
        if real:
            mismatches += 1
            small, b = prog, real[0]
            if b["transform"] != "eval_shape":
                small, b = shrink_jax(prog, real[0], args.shrink_s)
            record = {"face": "jax", "index": k, "seed": args.seed, "program": small.to_json(),
                      "original": prog.to_json(), "transforms_failing":
                      [r["transform"] for r in real], **b}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"MISMATCH #{k} {b['transform']}: {b['error'][:200]}\n  "
                  f"{json.dumps(small.to_json())}", flush=True)
        if time.monotonic() - last > args.progress_s:
            last = time.monotonic()
            print(f"[{last - t0:7.0f} s] {done} programs, {mismatches} mismatches, "
                  f"{skipped} documented, {refused} refused by JAX", flush=True)
    return done, mismatches, skipped, refused


# ------------------------------------------------------------------ the torch face


def fuzz_torch(args: argparse.Namespace, out: Any) -> tuple[int, int, int, int]:
    import fuzz_torch_programs as ftp

    done = mismatches = skipped = refused = 0
    t0 = last = time.monotonic()
    for k in range(args.programs):
        if time.monotonic() - t0 > args.time_limit:
            break
        prog = ftp.draw_program(fp.RngDrawer(args.seed * 1_000_003 + k))
        try:
            bad = ftp.check(prog)
        except ftp.TorchRefused:
            refused += 1
            done += 1
            continue
        done += 1
        real = [b for b in bad if documented(prog, b) is None]
        skipped += len(bad) - len(real)
        if real:
            mismatches += 1
            small, b = ftp.shrink(prog, real[0], args.shrink_s)
            record = {"face": "torch", "index": k, "seed": args.seed, "program": small.to_json(),
                      "original": prog.to_json(), **b}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(f"MISMATCH #{k} {b['check']}: {b['error'][:200]}\n  "
                  f"{json.dumps(small.to_json())}", flush=True)
        if time.monotonic() - last > args.progress_s:
            last = time.monotonic()
            print(f"[{last - t0:7.0f} s] {done} programs, {mismatches} mismatches, "
                  f"{skipped} documented, {refused} refused by PyTorch", flush=True)
    return done, mismatches, skipped, refused


def replay(path: str) -> int:
    """Re-check the programs of a failures file: how many still fail."""
    import fuzz_torch_programs as ftp

    still = 0
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            prog: Any = (fp.Prog.from_json(rec["program"]) if rec["face"] == "jax"
                         else ftp.TorchProg.from_json(rec["program"]))
            try:
                bad = fp.check(prog) if rec["face"] == "jax" else ftp.check(prog)
                bad = [b for b in bad if documented(prog, b) is None]
            except Exception as e:  # still failing before any transform ran
                bad = [{"error": f"{type(e).__name__}: {e}"}]
            still += bool(bad)
            print("FAIL" if bad else "ok  ", json.dumps(rec["program"]),
                  bad[0]["error"][:200] if bad else "", flush=True)
    print(f"replay: {still} still failing")
    return 1 if still else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--face", choices=("jax", "torch"), default="jax")
    p.add_argument("--programs", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0,
                   help="index of the first program (JAX face): chunks of one seed's run")
    p.add_argument("--time-limit", type=float, default=3600.0)
    p.add_argument("--out", default="failures.jsonl")
    p.add_argument("--shrink-s", type=float, default=60.0, help="time to shrink one failure")
    p.add_argument("--progress-s", type=float, default=30.0)
    p.add_argument("--replay", help="re-check the programs of a failures file instead")
    args = p.parse_args(argv)
    funcgrad.config.update("jax_enable_x64", True)
    if args.replay:
        return replay(args.replay)
    t0 = time.monotonic()
    with open(args.out, "w") as out:
        run = fuzz_jax if args.face == "jax" else fuzz_torch
        done, mismatches, skipped, refused = run(args, out)
    oracle = "JAX" if args.face == "jax" else "PyTorch"
    print(f"fuzz {args.face}: {done} programs, {mismatches} mismatches ({skipped} documented "
          f"or reported-open differences skipped, {refused} programs refused by {oracle}), "
          f"seed {args.seed}, "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
