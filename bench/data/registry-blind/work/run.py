import json,re,sys,importlib
C=[json.loads(l) for l in open('/work/wt/blind/registry/catalogue.jsonl')]
mod=importlib.import_module(sys.argv[1])
show = len(sys.argv)>2
out=[]
for item in mod.Q:
    kind,q,inc,exc=item[:4]
    extra=item[4] if len(item)>4 else []
    if isinstance(inc,list):
        acc=list(inc)
    else:
        r=re.compile(inc,re.I); x=re.compile(exc,re.I) if exc else None
        acc=[e['id'] for e in C if r.search(e['name']+' '+e['description']) and not (x and x.search(e['id']))]
    acc=sorted(set(acc)|set(extra))
    out.append({"query":q,"accept":acc,"kind":kind})
    if show:
        print(f"### [{kind}] {q} ({len(acc)})")
        for e in C:
            if e['id'] in acc: print("  +",e['id'],'|',e['description'][:110])
with open(sys.argv[1]+'.jsonl','w') as f:
    for o in out: f.write(json.dumps(o,ensure_ascii=False)+"\n")
print("n",len(out), "sizes", [len(o['accept']) for o in out])
