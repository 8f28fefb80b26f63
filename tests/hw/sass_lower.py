#!/usr/bin/env python3
"""Reads the op forms of isa/lower.h out of `cuobjdump -sass` of tests/hw/forms.cu.

    python3 tests/hw/sass_lower.py traces/h100/forms.sass > isa/lower_forms.c

Each form is a region of one kernel of forms.cu between two PMTRIG marks (FORM_MARK(n) in the
source is `pmevent n`, PMTRIG 1<<n in SASS). Inside the region the script walks the path one
execution takes (the ready case: a try_wait that succeeds, a spin that ends at once, the
fall-through of a test unless the form says otherwise), classifies every instruction into an
iclass, and computes the dependencies by def-use over R/UR/P/UP registers. traces/h100/FORMS.md
says what each form is and why instructions were cut.

--check prints a readable listing of every form instead of C (to stderr too on errors).
"""
import os
import re
import sys

# ------------------------------------------------------------------ mnemonic -> iclass
# The first rule that matches the mnemonic (with its modifiers) wins. ICLASS_LIST's doc
# strings, extended; FORMS.md lists the choices that are not in those strings.
CLASS_RULES = [
    (r"^PMTRIG", None),  # the marks: dropped
    (r"^(HMMA|IMMA|HGMMA|WGMMA)", "MMA"),
    # a 64-bit product: the FMA-heavy pipe for longer, and a dispatch hold (imad_wide.csv, machine imad_wide_dispatch)
    (r"^IMAD\.WIDE", "IMADW"),
    (r"^IMAD", "IMAD"),
    (r"^(FFMA|FADD|FMUL|FSETP|FMNMX|HFMA2|HADD2|HMUL2)", "FMA"),
    # VIADD issues to the FMA-heavy pipe, as IMAD does; I2FP, MOV, CS2R to the ALU (pipe_dual.csv, and
    # pipes_ncu.csv's rows whose opcode counts add up exactly: ncu's pipe counts match only so)
    (r"^VIADD", "IMAD"),
    (r"^(I2FP|MOV|CS2R)", "ALU"),
    (r"^(I2F|F2I|F2F|MUFU|POPC|FLO|BREV|F2FP)", "CONV"),
    (r"^S2UR", "S2R"),  # a special register into the uniform datapath: the S2R path and latency (pcsamp_latency.csv)
    (r"^S2R", "S2R"),
    (r"^(UBLKCP|UTMALDG|UTMASTG)", "LDGSTS"),  # bulk async copy: issued like cp.async
    (r"^UTMACMDFLUSH", "LDGDEPBAR"),  # cp.async.bulk.commit_group: closes the bulk group as LDGDEPBAR does cp.async's
    (r"^(LDC|R2UR|VOTEU|ELECT|U)", "UNI"),
    (r"^(BRA|BSSY|BSYNC|WARPSYNC|BMOV|CALL|RET|EXIT|NOP|YIELD|NANOSLEEP|BREAK|KILL|ENDCOLLECTIVE)", "BRA"),
    (r"^(LDGSTS)", "LDGSTS"),
    (r"^LDGDEPBAR", "LDGDEPBAR"),
    (r"^DEPBAR", "DEPBAR"),
    (r"^(SYNCS|ARRIVES|FENCE|MEMBAR|ERRBAR|CGAERRBAR|CCTL)", "SYNCS"),
    (r"^BAR", "BAR"),
    (r"^(SHFL|VOTE|MATCH|REDUX)", "SHFL"),
    (r"^(LDSM|LDS|ATOMS)", "LDS"),
    (r"^STS", "STS"),
    (r"^(LDG|LDL|LD|ATOMG|ATOM)", "LDG"),
    (r"^(STG|STL|ST|RED)", "STG"),
    (r"^(IADD3|IADD|LOP3|LOP|ISETP|SEL|SHF|SHL|SHR|LEA|IMNMX|VIMNMX|PLOP3|P2R|R2P|FSEL|PRMT|IABS|BMSK|SGXT)", "ALU"),
]
ICLASS_ORDER = ["ALU", "IMAD", "IMADW", "FMA", "CONV", "UNI", "S2R", "BRA", "LDS", "STS", "LDG", "STG", "LDGSTS",
                "DEPBAR", "LDGDEPBAR", "SYNCS", "BAR", "SHFL", "MMA"]


def iclass(ins):
    if ins.guard == "!PT":  # never executes (ptxas's padding before LDGSTS): an issue slot only
        return "BRA"
    for pat, cls in CLASS_RULES:
        if re.match(pat, ins.mnem):
            return cls
    raise SystemExit("sass_lower: no class for %s (%s)" % (ins.mnem, ins.text))


# ------------------------------------------------------------------ parsing
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z0-9_.]+)\s*([^;]*);")
HIGH = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
REG = re.compile(r"(?<![A-Za-z0-9_])(!?)(UR\d+|URZ|R\d+|RZ|UP\d|UPT|P\d|PT)((?:\.reuse|\.64|\.128|\.X4|\.H0|\.H1|\.B\d)*)")


class Insn:
    def __init__(self, addr, guard, mnem, args, text):
        self.addr, self.guard, self.mnem, self.text = addr, guard, mnem, text
        self.stall, self.scoreboard = None, False
        self.args = [a.strip() for a in split_args(args)] if args.strip() else []
        self.defs, self.uses = regs_of(self)


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def expand(name, width):
    m = re.match(r"(UR|R)(\d+)$", name)
    if not m or width == 1:
        return [name]
    return ["%s%d" % (m.group(1), int(m.group(2)) + i) for i in range(width)]


ZERO = {"RZ", "URZ", "PT", "UPT"}
NO_DEST = re.compile(r"^(ST|STG|STS|STL|RED|LDGSTS|BAR|BRA|BSSY|BSYNC|WARPSYNC|EXIT|NANOSLEEP|ARRIVES|FENCE|MEMBAR|"
                     r"ERRBAR|CGAERRBAR|CCTL|SYNCS\.CCTL|PMTRIG|NOP|YIELD|UBLKCP|UTMACMDFLUSH|LDGDEPBAR|DEPBAR|CALL|RET|"
                     r"ENDCOLLECTIVE)")


def dest_width(mnem):
    if ".128" in mnem:
        return 4
    if ".64" in mnem or "WIDE" in mnem or mnem.startswith("CS2R") or "TRANS64" in mnem and mnem.startswith("SYNCS.ARRIVE"):
        return 2
    return 1


def regs_of(ins):
    """(defs, uses): register names (pairs expanded), RZ/PT dropped."""
    defs, uses = [], []
    if ins.guard and ins.guard.lstrip("!") not in ZERO:
        uses.append(ins.guard.lstrip("!"))
    args = ins.args
    ndest = 0
    if args and not NO_DEST.match(ins.mnem):
        first = REG.fullmatch(args[0])
        if first:
            if re.match(r"U?P", first.group(2)):
                ndest = 2 if len(args) > 1 and REG.fullmatch(args[1]) else 1
            else:
                ndest = 1
                while ndest < len(args) and REG.fullmatch(args[ndest]) and re.match(r"!?U?P", args[ndest]) \
                        and not ins.mnem.startswith(("SEL", "FSEL", "VOTE", "PLOP3", "IMAD.X", "IADD3.X", "LEA.HI.X")):
                    ndest += 1
                if ins.mnem.startswith(("IADD3.X", "LEA.HI.X", "IMAD.X")):
                    ndest = 1
    for i, a in enumerate(args):
        is_dest = i < ndest
        for m in REG.finditer(a):
            name, mods = m.group(2), m.group(3)
            if name in ZERO:
                continue
            if is_dest:
                w = dest_width(ins.mnem) if not re.match(r"U?P", name) else 1
                defs += expand(name, w)
            else:
                w = 1
                if ".64" in mods or a.startswith("desc["):
                    w = 2
                elif "[" in a and ".64" in mods:
                    w = 2
                if a.startswith("desc[") and m.start() < a.index("]["):
                    w = 2  # the memory descriptor: a UR pair
                if re.match(r"^(IMAD\.WIDE|UIMAD\.WIDE)", ins.mnem) and i == 3:
                    w = 2
                if ins.mnem.startswith(("STG.E.64", "STS.64", "ST.E.64", "SYNCS.EXCH.64", "MATCH.ANY.U64")) and "[" not in a:
                    w = 2
                uses += expand(name, w)
    return defs, uses


def parse(path):
    kernels, cur = {}, None
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = kernels.setdefault(m.group(1), [])
            continue
        m = LINE.search(line)
        if m and cur is not None:
            guard = m.group(2).strip()[1:] if m.group(2) else None
            text = (m.group(2) or "") + m.group(3) + (" " + m.group(4).strip() if m.group(4).strip() else "")
            cur.append(Insn(int(m.group(1), 16), guard, m.group(3), m.group(4), text.strip()))
            continue
        m = HIGH.match(line)
        if m and cur and cur[-1].stall is None:
            control(cur[-1], int(m.group(1), 16))
    return kernels


def control(ins, high):
    """The control bits of the instruction's high word (bits 105-125 of the 128): the cycles the warp
    waits before its next instruction (ptxas's fixed-latency schedule) and whether the result comes
    back through a scoreboard (a variable-latency instruction: its readers wait on it)."""
    bits = high >> 41
    ins.stall = bits & 0xF
    ins.scoreboard = (bits >> 5) & 7 != 7


def mark_of(ins):
    if not ins.mnem.startswith("PMTRIG"):
        return None
    v = int(ins.args[0], 16)
    return v.bit_length() - 1


# ------------------------------------------------------------------ the forms
# kernel, start mark (its occ-th PMTRIG), end mark (the next PMTRIG must be it; "branch": up to
# and including the first BRA), anchor (regex on the mnemonic, first match on the path), loop
# (mark the first backward branch's body as the per-round loop), take (indices of conditional
# branches on the path, counted from 0, to take instead of falling through), drop (regex of
# mnemonics to leave out), slice (keep only the anchor's backward dependence slice).
EXAMPLE = "with_staging_unified4.sass"  # cuobjdump -sass of tests/hw/pipelines.cu's with_staging_unified<4>
# tests/hw/copy_burst.cu's chained burst<16, 16, 3> built with -maxrregcount=24: copies chained through one register
CHAINED = "copy_burst_chained.sass"
# cuobjdump -sass of tests/hw/pipelines.cu: every documented example as compiled (fn picks the kernel)
PIPELINES = "pipelines.sass"

FORMS = [
    # per_stage: the head's or tail's advance and wrap, which stages_count = 1 folds away
    # (traces/h100/pipelines.sass: with_staging_unified<1> and with_single_stage have none of them).
    # the block pipeline's waits and commit as the examples' kernels compile them, inside their loops
    # (with_staging_unified<4>): the wait's retry loop in a convergence region (BSSY before the try,
    # BSYNC where the ready branch lands) and the stage's barrier address in R registers; forms.cu's
    # straight-line kernel compiles them without the region and in uniform registers.  The PRMT that
    # opens the loop's trip (the pipeline's packed head and phase bits) is the fetch loop's, not the
    # acquire's (the line table gives it to the for statement).
    # per_stage: the stage's index (LOP3 0xff) and its barrier's address (LEA), which one stage folds
    # into the barrier's constant address (pipelines.sass with_single_stage 0x0600-0x0680)
    dict(id="ACQUIRE_BLOCK", file=EXAMPLE, a=(0x0770, 0x0a00), anchor=r"SYNCS\.PHASECHK", trim=[r"^PRMT R21,"],
         per_stage=[0x0780, 0x0810]),
    dict(id="ACQUIRE_THREAD", k="forms_pipe_thread", s=7, e=8, anchor=None),
    # the commit with the fetch loop's back-edge test that ptxas interleaved with it trimmed (the
    # counter's IADD3 and IMAD.X, the ULDC of batch_sz, the four compares, the state's PRMT)
    dict(id="COMMIT_BLOCK", file=EXAMPLE, a=(0x0bb0, 0x0d50), anchor=r"SYNCS\.ARRIVE\.TRANS64\.RED",
         per_stage=[0xc40, 0xc90, 0xcd0, 0xd20],
         trim=[r"^IADD3 R9,", r"^ULDC\.64 UR4, c\[0x0\]\[0x228\]", r"^IMAD\.X R10,", r"^ISETP\.GE\.U32", r"^PRMT R19,"]),
    dict(id="COMMIT_THREAD", k="forms_pipe_thread", s=9, e=10, anchor=r"LDGDEPBAR"),
    dict(id="WAIT_BLOCK", file=EXAMPLE, a=(0x0d70, 0x0ff0), anchor=r"SYNCS\.PHASECHK", per_stage=[0x0d80, 0x0e00]),
    # the thread-scope wait in the example's loop (with_staging_scope_thread<2>): the switch over the
    # batches in flight in its convergence regions (BSSY B0-B2, BREAK, BSYNC), one batch pending
    dict(id="WAIT_THREAD", file=PIPELINES, fn="with_staging_scope_threadILm2E", a=(0x0d60, 0x1130), anchor=r"DEPBAR"),
    dict(id="RELEASE_BLOCK", k="forms_pipe_block", s=13, e=14, anchor=r"SYNCS\.ARRIVE",
         per_stage=[0x1220, 0x1260, 0x1270, 0x1290]),
    dict(id="RELEASE_THREAD", k="forms_pipe_thread", s=13, e=14, anchor=None),
    dict(id="WAIT_PRIOR", k="forms_primitives", s=9, e=10, anchor=r"DEPBAR"),
    dict(id="PRIM_COMMIT", k="forms_primitives", s=7, e=8, anchor=r"LDGDEPBAR"),
    dict(id="PRIM_COPY", k="forms_primitives", s=5, e=6, anchor=r"LDGSTS"),
    # a copy that continues a run whose addresses step by a run-time stride, as ptxas compiles it under
    # register pressure: the IMAD into the register the previous LDGSTS read (war: it waits for that read)
    dict(id="PRIM_COPY_RUN", file=CHAINED, a=(0x0500, 0x0520), anchor=r"LDGSTS", whole=True, war=True),
    dict(id="COPY_THREAD", k="forms_pipe_thread", s=8, e=9, anchor=r"LDGSTS", loop=True),
    dict(id="COPY_GROUP", k="forms_pipe_block", s=8, e=9, anchor=r"LDGSTS", loop=True),
    dict(id="COPY_BARRIER", k="forms_copy_barrier", s=7, e=8, anchor=r"LDGSTS", loop=True),
    dict(id="COPY_BULK", k="forms_copy_bulk", s=7, e=8, anchor=r"UBLKCP"),
    dict(id="BULK_STORE", k="forms_bulk_store", s=5, e=6, anchor=r"UBLKCP"),
    dict(id="BULK_COMMIT", k="forms_bulk_store", s=6, e=7, anchor=r"UTMACMDFLUSH"),
    dict(id="BULK_WAIT", k="forms_bulk_store", s=9, e=10, anchor=r"DEPBAR"),
    dict(id="MAKE_PIPELINE", k="forms_pipe_block", s=5, e=6, anchor=r"BAR\.SYNC"),
    dict(id="QUIT", k="forms_pipe_block", s=14, e=15, occ=1, anchor=r"ATOM"),
    dict(id="BARRIER_INIT", k="forms_barrier", s=5, e=6, anchor=r"SYNCS\.EXCH"),
    dict(id="BARRIER_ARRIVE", k="forms_barrier", s=7, e=8, anchor=r"SYNCS\.ARRIVE", result=True),
    dict(id="BARRIER_WAIT", k="forms_barrier", s=8, e=9, anchor=r"SYNCS\.PHASECHK"),
    dict(id="BARRIER_ARRIVE_WAIT", k="forms_barrier", s=9, e=10, anchor=r"SYNCS\.PHASECHK"),
    dict(id="BARRIER_ARRIVE_DROP", k="forms_barrier", s=11, e=12, anchor=r"SYNCS\.ARRIVE"),
    dict(id="SYNCTHREADS", k="forms_sync", s=5, e=6, anchor=r"BAR\.SYNC"),
    # cooperative groups' block.sync() in the examples' loop (with_staging_scope_thread<2>): the warp's
    # convergence check (UMOV of the full mask, BRA.DIV to the slow path) before the BAR.SYNC
    dict(id="SYNC_BLOCK", file=PIPELINES, fn="with_staging_scope_threadILm2E", a=(0x1130, 0x1160), anchor=r"BAR\.SYNC"),
    dict(id="SYNCWARP", k="forms_sync", s=7, e=8, anchor=r"(WARPSYNC|NOP)"),
    # grid.sync: the block's thread 0 path (take branch 3: the single-active-thread atomic)
    dict(id="GRID_SYNC", k="forms_grid_sync", s=9, e=10, anchor=r"LD\.E\.STRONG\.GPU", take={3},
         trim=[r"^UMOV UR\d+, 0xffffffff", r"^@!P0 BRA 0x"]),
    dict(id="COMPUTE_LOAD", k="forms_compute", s=1, e=2, anchor=r"LDS", result=True),
    # compute's loop as the examples' kernels compile it (with_staging_unified<4> of tests/hw/pipelines.cu):
    # by address, whole (nothing cut as hoisted: the region is the loop's own set-up)
    dict(id="CHAIN_TRIP", file=EXAMPLE, a=(0x1140, 0x1380), anchor=None, trip=True),
    dict(id="COMPUTE_ENTER", file=EXAMPLE, a=(0x10d0, 0x1140), anchor=None, whole=True),
    dict(id="COMPUTE_EXIT", file=EXAMPLE, a=(0x1380, 0x1490), anchor=None, take={0}, whole=True),
    dict(id="COMPUTE_SKIP", file=EXAMPLE, a=(0x10d0, 0x10e0), anchor=None, take={0}, whole=True),
    dict(id="COMPUTE_STORE", k="forms_compute", s=3, e=4, anchor=r"STG"),
    dict(id="SHFL_STEP", k="forms_shfl", s=7, e=8, anchor=r"SHFL", result=True),
    dict(id="SHARED_LOAD", k="forms_memory", s=5, e=6, anchor=r"LDS", result=True),
    dict(id="SHARED_STORE", k="forms_memory", s=7, e=8, anchor=r"STS"),
    dict(id="GLOBAL_LOAD", k="forms_memory", s=9, e=10, anchor=r"LDG", result=True),
    dict(id="GLOBAL_STORE", k="forms_memory", s=11, e=12, anchor=r"STG"),
    # the for loop's test: the back edge after mark 12 and the compares writing its predicate
    dict(id="BRANCH", k="forms_memory", s=12, e="branch", anchor=r"BRA", slice=True),
    # the divergent if: its test, BSSY, the branch; the body is other statements (take it: skip)
    dict(id="DIVERGE", k="forms_control", s=7, e=8, anchor=r"BRA", take={0}),
]

LFORM_NAMES = {}  # id -> name, read from lower.h when available


def region(kern, f):
    """Index range [lo, hi) of the form's region in the kernel's instruction list."""
    if "a" in f:
        at = {ins.addr: i for i, ins in enumerate(kern)}
        if f["a"][0] not in at or f["a"][1] not in at:
            raise SystemExit("sass_lower: %s: no instruction at 0x%04x or 0x%04x" % (f["id"], f["a"][0], f["a"][1]))
        return at[f["a"][0]], at[f["a"][1]]
    marks = [i for i, ins in enumerate(kern) if mark_of(ins) is not None]
    starts = [i for i in marks if mark_of(kern[i]) == f["s"]]
    occ = f.get("occ", 0)
    if len(starts) <= occ:
        raise SystemExit("sass_lower: %s: mark %d not found" % (f["id"], f["s"]))
    lo = starts[occ] + 1
    if f["e"] == "branch":
        # the loop's back edge after the mark; the region is the whole loop body
        hi = next(i for i in range(lo, len(kern)) if kern[i].mnem.startswith("BRA")) + 1
        tgt = branch_target(kern[hi - 1])
        lo = next(i for i, ins in enumerate(kern) if ins.addr == tgt)
        return lo, hi
    hi = next(i for i in marks if i >= lo)
    if mark_of(kern[hi]) != f["e"]:
        raise SystemExit("sass_lower: %s: mark %d is followed by mark %d, not %d"
                         % (f["id"], f["s"], mark_of(kern[hi]), f["e"]))
    return lo, hi


def branch_target(ins):
    for a in reversed(ins.args):
        if re.fullmatch(r"0x[0-9a-f]+", a):
            return int(a, 16)
    return None


def walk(kern, lo, hi, f, taken=None):
    """The instructions one execution issues in [lo, hi): a list of indices; loop (b, e) in it.  The
    branches it takes go into taken (kernel indices: LI_TAKEN)."""
    by_addr = {ins.addr: i for i, ins in enumerate(kern)}
    taken = set() if taken is None else taken
    path, loop, pos, ncond, seen = [], None, lo, 0, {}
    writer = {}  # register -> mnemonic of the last writer on the path
    while lo <= pos < hi:
        ins = kern[pos]
        seen[pos] = seen.get(pos, 0) + 1
        if seen[pos] > 2:
            raise SystemExit("sass_lower: %s: path does not end" % f["id"])
        if mark_of(ins) is not None:
            pos += 1
            continue
        path.append(pos)
        for r in ins.defs:
            writer[r] = ins.mnem
        if ins.mnem == "EXIT" and not ins.guard:
            break
        if not ins.mnem.startswith("BRA"):
            pos += 1
            continue
        tgt = branch_target(ins)
        cond = ins.guard is not None or ".DIV" in ins.mnem or ".ANY" in ins.mnem or \
            any(re.fullmatch(r"!?U?P\d", a) for a in ins.args)
        if not cond:
            taken.add(pos)
            pos = by_addr[tgt]
            continue
        take = ncond in f.get("take", ())
        ncond += 1
        guard = (ins.guard or "").lstrip("!")
        if guard and writer.get(guard, "").startswith("SYNCS.PHASECHK") and tgt > ins.addr:
            take = True  # try_wait succeeded: the ready case
        if tgt <= ins.addr and f.get("loop") and loop is None and not take:
            # the per-round loop: its body is on the path from the target to here
            b = next(j for j, p in enumerate(path) if kern[p].addr >= tgt)
            loop = (b, len(path))
        if take:
            taken.add(pos)
        pos = by_addr[tgt] if take else pos + 1
    return path, loop


SIDE_OPS = {"ST", "STG", "STS", "STL", "RED", "ATOM", "ATOMS", "ATOMG", "LDGSTS", "BAR", "BRA", "BSSY", "BSYNC",
            "WARPSYNC", "EXIT", "NANOSLEEP", "ARRIVES", "FENCE", "MEMBAR", "ERRBAR", "CGAERRBAR", "CCTL", "SYNCS",
            "NOP", "YIELD", "UBLKCP", "LDGDEPBAR", "DEPBAR", "LDS", "LDG", "LD", "LDL", "SHFL", "MATCH", "VOTE",
            "ELECT"}


class _Side:
    """Instructions with an effect besides their registers (memory, synchronisation, control)."""

    @staticmethod
    def match(mnem):
        return mnem.split(".")[0] in SIDE_OPS


SIDE = _Side()


def cut_hoisted(kern, path, anchor_pos):
    """Leaves out what ptxas moved into the region from the code after it: the largest set S of
    instructions after the anchor, each with no side effect and not updating its own input (a
    counter++ is the op's own), such that no member of S reads a result of a kept instruction
    and no kept instruction reads a result of a member of S."""
    if anchor_pos is None:
        return list(path)
    a = path.index(anchor_pos)
    S = {i for i in range(a + 1, len(path))
         if not SIDE.match(kern[path[i]].mnem) and not (set(kern[path[i]].defs) & set(kern[path[i]].uses))}

    def writer(i, r):
        for j in range(i - 1, -1, -1):
            if r in kern[path[j]].defs:
                return j
        return None

    changed = True
    while changed:
        changed = False
        for i in sorted(S):
            bad = any(w is not None and w not in S for w in (writer(i, r) for r in kern[path[i]].uses))
            if not bad:
                for j in range(i + 1, len(path)):
                    if j not in S and any(writer(j, r) == i for r in kern[path[j]].uses):
                        bad = True
                        break
            if bad:
                S.discard(i)
                changed = True
    return [p for i, p in enumerate(path) if i not in S]


def backward_slice(kern, path, target):
    need, keep = set(kern[target].uses), {target}
    for p in reversed([q for q in path if kern[q].addr < kern[target].addr]):
        if set(kern[p].defs) & need:
            keep.add(p)
            need -= set(kern[p].defs)
            need |= set(kern[p].uses)
    return [p for p in path if p in keep]


def pred_slice(kern, path, target):
    """The branch and the compares that compute its predicate (ISETP, ISETP.EX chains)."""
    need, keep = {r for r in kern[target].uses if re.match(r"U?P", r)}, {target}
    for p in reversed([q for q in path if kern[q].addr < kern[target].addr]):
        d = {r for r in kern[p].defs if re.match(r"U?P", r)}
        if d & need:
            keep.add(p)
            need -= d
            need |= {r for r in kern[p].uses if re.match(r"U?P", r)}
    return [p for p in path if p in keep]


def live_after(kern, hi, reg):
    for ins in kern[hi:]:
        if reg in ins.uses:
            return True
        if reg in ins.defs and not ins.guard:
            return False
    return False


def build(kernels, f):
    if "k" in f:
        kern = kernels[f["k"]]
    elif "fn" in f:
        kern = next(v for name, v in kernels[f["file"]].items() if f["fn"] in name)
    else:
        kern = next(iter(kernels[f["file"]].values()))
    lo, hi = region(kern, f)
    taken = set()
    path, loop = walk(kern, lo, hi, f, taken)
    notes = []
    if f.get("trip"):
        # one trip of the chain loop: the first backward loop, its FFMAs left out
        f2 = dict(f, loop=True)
        path, loop = walk(kern, lo, hi, f2, taken)
        b, e = loop
        body = path[b:e]
        nffma = sum(1 for p in body if kern[p].mnem.startswith("FFMA"))
        path = [p for p in body if not kern[p].mnem.startswith("FFMA")]
        notes.append("the loop body has %d FFMAs (left out: issued by the core as the chain)" % nffma)
        loop = (0, len(path))
    anchor_pos = None
    if f["anchor"]:
        anchor_pos = next((p for p in path if re.match(f["anchor"], kern[p].mnem)), None)
        if anchor_pos is None:
            raise SystemExit("sass_lower: %s: no anchor %s on the path" % (f["id"], f["anchor"]))
    elif f.get("trip"):
        anchor_pos = path[-1]  # the back edge
    before = list(path)
    if not f.get("whole"):
        path = cut_hoisted(kern, path, anchor_pos)
    cut = [p for p in before if p not in path]
    if f.get("slice"):
        sl = pred_slice(kern, path, anchor_pos)
        cut += [p for p in path if p not in sl]
        path = sl
    for pat in f.get("trim", ()):
        cut += [p for p in path if re.match(pat, kern[p].text)]
        path = [p for p in path if not re.match(pat, kern[p].text)]
    if loop:
        # loop bounds in the kept list
        bl = [p for p in before[loop[0]:loop[1]] if p in path] if not f.get("trip") else path
        loop = (path.index(bl[0]), path.index(bl[-1]) + 1) if bl else None
    if len(path) > 32:
        raise SystemExit("sass_lower: %s: %d instructions (more than a 32-bit deps mask)" % (f["id"], len(path)))
    # war: the R registers the last LDGSTS before the region reads (its shared address among them)
    prev = next((q for q in range(lo - 1, -1, -1) if kern[q].mnem.startswith("LDGSTS")), None) if f.get("war") else None
    war_regs = {r for r in kern[prev].uses if r.startswith("R")} if prev is not None else set()
    insts = []
    for i, p in enumerate(path):
        ins = kern[p]
        deps, ext = 0, False
        for r in ins.uses:
            w = None
            for j in range(i - 1, -1, -1):
                if r in kern[path[j]].defs:
                    w = j
                    break
            if w is None:
                ext = True
            else:
                deps |= 1 << w
        flags = []
        if p == anchor_pos:
            flags.append("LI_ANCHOR")
        if ext:
            flags.append("LI_EXTERN")
        if p in taken:
            flags.append("LI_TAKEN")
        if ins.guard == "!PT":
            flags.append("LI_PAD")
        if ins.mnem.startswith("LDC"):  # a constant into a vector register: the constant cache's latency
            flags.append("LI_LDC")
        if ins.mnem.startswith(("SYNCS.ARRIVE", "ARRIVES")):  # its token back at the arrive's latency, not PHASECHK's
            flags.append("LI_ARRIVE")
        if f.get("war") and set(ins.defs) & war_regs:  # overwrites what the LDGSTS before the region reads
            flags.append("LI_WAR")
        if re.match(r"S2R\b", ins.mnem) and re.search(r"SR_(TID|LANEID)", ins.text):  # queues behind the port (s2r_mio.csv)
            flags.append("LI_SREG_THREAD")
        if re.match(r"(UBLKCP|UTMALDG|UTMASTG)", ins.mnem):  # one uniform instruction, whatever the warp's lanes
            flags.append("LI_BULK")
        insts.append(dict(cls=iclass(ins), flags=flags, deps=deps, ins=ins))
    # results (forms that produce a value): the last writer on the walked path of an R register
    # read after the region
    last = {}
    for i, p in enumerate(path if f.get("result") else []):
        for r in kern[p].defs:
            if r.startswith("R"):
                last[r] = i
    walked = before
    for r, i in last.items():
        if any(r in kern[q].defs for q in walked[walked.index(path[i]) + 1:]):
            continue
        if live_after(kern, hi, r) and "LI_RESULT" not in insts[i]["flags"]:
            insts[i]["flags"].append("LI_RESULT")
    anchor = path.index(anchor_pos) if anchor_pos in path else -1
    to_shared, to_global = operand_paths(kern, path, anchor)
    per_stage = 0
    for a in f.get("per_stage", ()):
        per_stage |= 1 << next(i for i, p in enumerate(path) if kern[p].addr == a)
    return dict(f=f, insts=insts, anchor=anchor, loop=loop or (-1, -1), cut=[kern[p] for p in cut], per_stage=per_stage,
                to_shared=to_shared, to_global=to_global,
                src=("traces/h100/%s%s 0x%04x-0x%04x" % (f["file"], " " + f["fn"] if "fn" in f else "", kern[lo].addr,
                                                   kern[hi - 1].addr) if "file" in f
                     else "traces/h100/forms.sass %s 0x%04x-0x%04x" % (f["k"], kern[lo].addr, kern[hi - 1].addr)
                     if hi > lo else "traces/h100/forms.sass %s: marks %d-%d adjacent at 0x%04x"
                     % (f["k"], f["s"], f["e"], kern[hi].addr)),
                notes=notes)


def operand_paths(kern, path, anchor):
    """For an LDGSTS anchor: (to_shared, to_global), bit i set where path[i] computes (through the path's
    other instructions) the register of the copy's shared destination or of its global source; the
    anchor in both.  An instruction in neither reads no address (a thread's trip test, the loop's
    increment) and so need not wait for the op's address arithmetic.  (0, 0) for any other anchor."""
    if anchor < 0 or not kern[path[anchor]].mnem.startswith("LDGSTS"):
        return 0, 0
    ins = kern[path[anchor]]
    shared = [a for a in ins.args if a.startswith("[")]
    glob = [a for a in ins.args if a.startswith("desc[")]
    if len(shared) != 1 or len(glob) != 1:
        raise SystemExit("sass_lower: %04x: LDGSTS without one shared and one global operand: %s" % (ins.addr, ins.text))

    def feeders(arg, reads_desc):
        text = arg[arg.index("][") + 1:] if reads_desc else arg
        regs = [name for _, name, mods in REG.findall(text) if name not in ZERO]
        regs = [r for name in regs for r in (expand(name, 2) if reads_desc and name.startswith("R") else [name])]
        mask, work = 1 << anchor, [(anchor, r) for r in regs]
        while work:
            at, r = work.pop()
            w = next((j for j in range(at - 1, -1, -1) if r in kern[path[j]].defs), None)
            if w is not None and not mask >> w & 1:
                mask |= 1 << w
                work += [(w, r2) for r2 in kern[path[w]].uses]
        return mask

    return feeders(shared[0], False), feeders(glob[0], True)


def lform_names():
    names = {}
    try:
        text = open("isa/lower.h").read()
        text = text[text.index("#define LFORM_LIST"):text.index("enum lform_id")]
        for m in re.finditer(r'X\((\w+), "([^"]+)"', text):
            names[m.group(1)] = m.group(2)
    except OSError:
        pass
    return names


def emit_c(forms, names):
    out = ["/* Generated by tests/hw/sass_lower.py from traces/h100/forms.sass (tests/hw/forms.cu, nvcc 13.0",
           " * -O3 -arch=sm_90) and, for compute's loop, traces/h100/%s (tests/hw/pipelines.cu), for a" % EXAMPLE,
           " * run of chained copies traces/h100/%s (tests/hw/copy_burst.cu, -maxrregcount=24):" % CHAINED,
           " * do not edit; traces/h100/FORMS.md says how to regenerate it and what each form is.  One array",
           " * per form; each entry: class, flags, ptxas's stall count, whether it sets a scoreboard, the",
           " * instructions it reads; and the SASS instruction it is. */",
           '#include "lower.h"', "",
           "const char *const iclass_name[IC_COUNT] = {",
           "#define ICLASS_NAME(e, name, doc) name,",
           "\tICLASS_LIST(ICLASS_NAME)",
           "#undef ICLASS_NAME",
           "};", ""]
    for fm in forms:
        fid = fm["f"]["id"]
        if not fm["insts"]:
            out.append("/* %s: %s: compiles to nothing */" % (fid, fm["src"]))
            out.append("")
            continue
        out.append("/* %s: %s */" % (fid, fm["src"]))
        if len(fm["cut"]) > 6:
            out.append("/*   cut: %d instructions of the loop body that are not the test */" % len(fm["cut"]))
        else:
            for c in fm["cut"]:
                out.append("/*   cut: %04x: %s */" % (c.addr, c.text))
        for n in fm["notes"]:
            out.append("/*   %s */" % n)
        out.append("static const struct linst form_%s[] = {" % fid.lower())
        for i, x in enumerate(fm["insts"]):
            flags = "|".join(x["flags"]) or "0"
            out.append("\t{IC_%s, %s, %d, %d, 0x%xu}, /* %d  %04x: %s */" % (
                x["cls"], flags, x["ins"].stall or 0, int(x["ins"].scoreboard), x["deps"], i, x["ins"].addr,
                x["ins"].text.replace("*/", "* /")))
        out.append("};")
        out.append("")
    out.append("const struct lform lform_table[LF_COUNT] = {")
    for fm in forms:
        fid = fm["f"]["id"]
        name = names.get(fid, fid.lower())
        if fm["insts"]:
            out.append('\t[LF_%s] = {"%s", "%s", form_%s, %d, %d, %d, %d, 0x%xu, 0x%xu, 0x%xu, 0, 0, 0},' % (
                fid, name, fm["src"], fid.lower(), len(fm["insts"]), fm["anchor"], fm["loop"][0], fm["loop"][1],
                fm["per_stage"], fm["to_shared"], fm["to_global"]))
        else:
            out.append('\t[LF_%s] = {"%s", "%s", 0, 0, -1, -1, -1, 0x0u, 0x0u, 0x0u, 0, 0, 0},' % (fid, name, fm["src"]))
    out.append("};")
    return "\n".join(out) + "\n"


def emit_check(forms):
    out = []
    for fm in forms:
        out.append("== %s  n=%d anchor=%d loop=%s per_stage=0x%x to_shared=0x%x to_global=0x%x  %s" % (
            fm["f"]["id"], len(fm["insts"]), fm["anchor"], fm["loop"], fm["per_stage"], fm["to_shared"],
            fm["to_global"], fm["src"]))
        for c in fm["cut"]:
            out.append("     cut %04x %s" % (c.addr, c.text))
        for n in fm["notes"]:
            out.append("     note: " + n)
        for i, x in enumerate(fm["insts"]):
            deps = ",".join(str(j) for j in range(64) if x["deps"] >> j & 1)
            out.append("  %2d %-6s %-28s stall=%-2d%s deps=%-10s %04x %s" % (
                i, x["cls"], "|".join(f[3:] for f in x["flags"]), x["ins"].stall or 0,
                " sb" if x["ins"].scoreboard else "   ", deps, x["ins"].addr, x["ins"].text))
    return "\n".join(out) + "\n"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        raise SystemExit(__doc__)
    kernels = parse(args[0])
    kernels[EXAMPLE] = parse(os.path.join(os.path.dirname(args[0]), EXAMPLE))
    kernels[CHAINED] = parse(os.path.join(os.path.dirname(args[0]), CHAINED))
    kernels[PIPELINES] = parse(os.path.join(os.path.dirname(args[0]), PIPELINES))
    names = lform_names()
    if names and set(names) != {f["id"] for f in FORMS}:
        raise SystemExit("sass_lower: forms differ from lower.h's LFORM_LIST: %s"
                         % sorted(set(names) ^ {f["id"] for f in FORMS}))
    order = list(names) if names else [f["id"] for f in FORMS]
    forms = [build(kernels, next(f for f in FORMS if f["id"] == i)) for i in order]
    sys.stdout.write(emit_check(forms) if "--check" in sys.argv else emit_c(forms, names))


if __name__ == "__main__":
    main()
