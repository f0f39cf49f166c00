"""Medians and NWR/baseline ratios of the lines scripts/interleave.sh prints."""
import collections,statistics,sys
d=collections.defaultdict(list); u=collections.defaultdict(list); c=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[f[1]].append(float(f[3])); c[f[1]].append(float(f[6]))
    if f[4]!='-': u[f[1]].append(int(f[4])/max(1,int(f[5])))
for p,v in d.items(): print('%-11s'%p, 'median %6.0fK'%(statistics.median(v)/1e3), 'runs', ' '.join('%.0f'%(x/1e3) for x in v), ' unmarked %.0f%%'%(100*statistics.median(u[p])) if u[p] else '')
for b in ['silo','tictoc','mvto']:
    if b in d and b+'-nwr' in d:
        pr=[x/y for x,y in zip(d[b+'-nwr'],d[b])]
        print('%s+NWR / %s: ratio of medians %.2f, median of per-round ratios %.2f (per round %s)'%(b,b,statistics.median(d[b+'-nwr'])/statistics.median(d[b]), statistics.median(pr), ' '.join('%.2f'%x for x in pr)))
