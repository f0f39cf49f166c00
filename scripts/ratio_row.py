"""One line per result row of a `txlab run --out DIR`: round, protocol, threads, throughput,
nwr_unmarked_readers, commits, commits per CPU second, abort rate (scripts/interleave.sh)."""
import csv,sys
for r in csv.DictReader(open(sys.argv[1]+'/results.csv')):
    print(sys.argv[2], r['protocol'], r['threads'], r['throughput_tps'], r.get('counter_nwr_unmarked_readers','') or '-', r['commits'], float(r['commits'])/float(r['cpu_time_s']), r['abort_rate'])
