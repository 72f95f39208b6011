import json,re,sys
C=[json.loads(l) for l in open('/work/wt/blind/registry/catalogue.jsonl')]
T=[(e['name']+' '+e['description']) for e in C]
for pat in sys.argv[1:]:
    r=re.compile(pat,re.I)
    print(sum(1 for t in T if r.search(t)), pat)
