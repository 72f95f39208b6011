import json,re,sys
C=[json.loads(l) for l in open('/work/wt/blind/registry/catalogue.jsonl')]
for pat in sys.argv[1:]:
    r=re.compile(pat,re.I)
    hits=[e for e in C if r.search(e['name']+' '+e['description'])]
    print(f"=== {pat}  ({len(hits)})")
    for e in hits[:60]:
        print(f"  {e['id']} | {e['description'][:140]}")
