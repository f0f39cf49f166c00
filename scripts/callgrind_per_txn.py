"""Per-transaction costs from callgrind runs of `txlab run` (deterministic instruction counts on a
noisy host).

Record each run with collection limited to the transaction program and its commit, e.g.

  valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*Program>::run' \
      --toggle-collect='*Transaction>::commit' --callgrind-out-file=silo.out \
      target/release/txlab run --protocol silo --workload ycsb-b --threads 1 ... --warmup 0s

Costs are divided by the number of calls to `Program::run` (transactions executed, including any
run after the measured interval, which the harness's commit count leaves out).

  python3 scripts/callgrind_per_txn.py silo=silo.out single=single.out      # totals, ratios to the first
  python3 scripts/callgrind_per_txn.py --diff silo.out single.out [N]       # top N functions by change
"""
import collections
import re
import sys

KEYS = ['Ir', 'Dr', 'Dw', 'D1mr', 'D1mw', 'DLmr', 'DLmw']


def load(path):
    """(transactions, totals by event, self Ir by function) of one callgrind output file."""
    names, events, totals = {}, None, None
    self_ir = collections.Counter()
    txns, fn, callee, call_line = 0, None, None, False
    for line in open(path):
        if line.startswith('events:'):
            events = line.split()[1:]
        elif line.startswith(('totals:', 'summary:')):
            totals = [int(x) for x in line.split()[1:]]
        m = re.match(r'(c?fn)=\((\d+)\)(?: (.*))?', line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3).strip()
            if m.group(1) == 'fn':
                fn, callee = names[m.group(2)], None
            else:
                callee = names[m.group(2)]
            continue
        if line.startswith('calls='):
            if callee and callee.endswith('Program>::run'):
                txns += int(line.split()[0][len('calls='):])
            call_line = True
            continue
        if line[:1].isdigit() or line[:1] in '+-*':
            if call_line:  # the inclusive cost of the call above, not this function's own
                call_line, callee = False, None
                continue
            parts = line.split()
            if fn and len(parts) > 1:
                self_ir[fn] += int(parts[1])
    totals = totals + [0] * (len(events) - len(totals))
    return txns, dict(zip(events, totals)), self_ir


def summary(args):
    rows = []
    for a in args:
        label, path = a.split('=', 1)
        txns, tot, _ = load(path)
        rows.append((label, txns, tot))
    base = rows[0]
    print('%-12s %9s ' % ('label', 'txns') + ' '.join('%15s' % (k + '/txn') for k in KEYS))
    for label, txns, tot in rows:
        cells = []
        for k in KEYS:
            per, base_per = tot.get(k, 0) / txns, base[2].get(k, 0) / base[1]
            cells.append('%9.1f(%4.2f)' % (per, per / base_per if base_per else 0))
        print('%-12s %9d ' % (label, txns) + ' '.join(cells))


def diff(a, b, n):
    ta, _, fa = load(a)
    tb, _, fb = load(b)
    rows = sorted(((fb[k] / tb - fa[k] / ta, fa[k] / ta, fb[k] / tb, k) for k in set(fa) | set(fb)),
                  key=lambda r: -abs(r[0]))
    print('Ir per transaction: %.1f -> %.1f' % (sum(fa.values()) / ta, sum(fb.values()) / tb))
    for d, x, y, k in rows[:n]:
        print('%9.1f (%9.1f -> %9.1f)  %s' % (d, x, y, k[:110]))


if __name__ == '__main__':
    if sys.argv[1] == '--diff':
        diff(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 20)
    else:
        summary(sys.argv[1:])
