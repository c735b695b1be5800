# Joins the histories of bully-leader-crash runs (STORE/bully-leader-crash/*)
# with what failover-capture.sh caught (WATCH) and prints each run's parts
# of the kill failover in ms from the invoke, then the medians of the
# per-run differences: python3 failover-parts.py WATCH STORE [STORE...]
import json,sys,glob,os,statistics
from datetime import datetime,timezone
def ts(s):
    s=s.rstrip('Z')
    if '+' in s[19:]: s=s[:s.rindex('+')]
    a,b=s.split('.') if '.' in s else (s,'0'); b=(b+'000000')[:6]
    return datetime.fromisoformat(a+'.'+b).replace(tzinfo=timezone.utc).timestamp()
watch=sys.argv[1]; stores=sys.argv[2:]
ev={}
for l in open(watch+'/events.txt'):
    t,a,nm=l.split()
    ev.setdefault((nm,a),[]).append(int(t)/1e9)
hints={}
for f in glob.glob(watch+'/*.log'):
    nm=os.path.basename(f).rsplit('-',1)[0]
    for l in open(f):
        if 'peer-down-hint' in l:
            try: j=json.loads(l)
            except: continue
            hints.setdefault(nm,[]).append((ts(j['time']),j.get('peer'),j.get('source')))
rows=[]
for st in stores:
  for d in sorted(glob.glob(st+'/bully-leader-crash/2*')):
    recs=[json.loads(l) for l in open(d+'/history.jsonl')]
    cl=recs[0]['note'].split()[-1]
    inv=[r for r in recs if r['kind']=='fault' and r['fault']['op']=='kill' and r['fault']['phase']=='invoke'][0]
    ok=[r for r in recs if r['kind']=='fault' and r['fault']['op']=='kill' and r['fault']['phase']=='ok'][0]
    t0=ts(inv['time']); victim=inv['fault']['nodes'][0]
    name='rl-%s-node%d'%(cl,victim)
    kill=[t for t in ev.get((name,'kill'),[]) if t>=t0-1]
    die=[t for t in ev.get((name,'die'),[]) if t>=t0-1]
    hs=[]
    for i in range(1,6):
        if i==victim: continue
        h=[t for t,p,s in hints.get('rl-%s-node%d'%(cl,i),[]) if p==victim and t>=t0-1 and t<t0+2]
        if h: hs.append(min(h))
    res=json.load(open(d+'/results.json'))
    fo=res['failovers'][0]
    after=[r for r in recs if ts(r['time'])>=t0 and ts(r['time'])<t0+2]
    firstel=min([ts(r['time']) for r in after if r['kind']=='send' and r['msg']['type']=='ELECTION'] or [0])
    coord=min([ts(r['time']) for r in after if r['kind']=='send' and r['msg']['type']=='COORDINATOR'] or [0])
    last5=max([ts(r['time']) for r in recs if r.get('node')==victim and r['kind'] in('send','view') and t0-1<ts(r['time'])<t0+1] or [0])
    settled=ts(fo['at'])
    f=lambda t: (t-t0)*1e3 if t else float('nan')
    rows.append(dict(store=os.path.basename(st),fo=fo['ms'],ok=f(ts(ok['time'])),kill=f(kill[0]) if kill else float('nan'),die=f(die[0]) if die else float('nan'),
      last5=f(last5),hint1=f(min(hs)) if hs else float('nan'),hintlast=f(max(hs)) if hs else float('nan'),elec=f(firstel),coord=f(coord),settled=f(settled)))
keys=['fo','kill','die','last5','hint1','hintlast','elec','coord','settled','ok']
print('%-6s '%'store'+' '.join('%8s'%k for k in keys))
for r in rows: print('%-6s '%r['store']+' '.join('%8.1f'%r[k] for k in keys))
for s in sorted(set(r['store'] for r in rows)):
    rs=[r for r in rows if r['store']==s]
    med=lambda k: statistics.median([r[k] for r in rs if r[k]==r[k]] or [float('nan')])
    print('%-6s '%('p50 '+s)[:6]+' '.join('%8.1f'%med(k) for k in keys), 'n=%d'%len(rs))
print('segments (median of per-run differences, ms):')
segs=[('invoke->kill event','kill',None),('kill event->first hint','hint1','kill'),('first->last hint','hintlast','hint1'),('first hint->COORDINATOR','coord','hint1'),('COORDINATOR->settled','settled','coord'),('failover (checker)','fo',None)]
for s in sorted(set(r['store'] for r in rows)):
    rs=[r for r in rows if r['store']==s]
    out=[]
    for name,a,b in segs:
        v=[r[a]-(r[b] if b else 0) for r in rs if r[a]==r[a] and (not b or r[b]==r[b])]
        out.append('%s %.1f'%(name,statistics.median(v)))
    print(' ',s,'n=%d:'%len(rs),'; '.join(out))
