"""Summary of scripts/interleave_builds.sh output: per-label medians, and for each B/A argument
the ratio of medians, the median of the per-round ratios B/A with a 95 % bootstrap interval
(4000 resamples of the rounds), and in how many rounds B was below A."""
import sys,statistics,random,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[f[1]].append(float(f[2]))
for k,v in d.items(): print('%-14s median %7.0fK  n=%d  range %.0f-%.0fK'%(k,statistics.median(v)/1e3,len(v),min(v)/1e3,max(v)/1e3))
random.seed(1)
for pair in sys.argv[2:]:
    b,a=pair.split('/')
    pr=[x/y for x,y in zip(d[b],d[a])]
    bs=sorted(statistics.median(random.choices(pr,k=len(pr))) for _ in range(4000))
    print('%s / %s: ratio of medians %.3f, median per-round %.3f, 95%% CI [%.3f, %.3f], below 1 in %d/%d'%(b,a,statistics.median(d[b])/statistics.median(d[a]),statistics.median(pr),bs[100],bs[3899],sum(x<1 for x in pr),len(pr)))
