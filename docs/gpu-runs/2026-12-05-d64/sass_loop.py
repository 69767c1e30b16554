#!/usr/bin/env python3
"""Opcode counts of the longest loop of an nvdisasm listing (the backward main kernel's step
loop): finds backward branches to labels, takes the longest span, counts opcodes by their first
component. usage: sass_loop.py LISTING.sass (nvdisasm -c -g of a fitness-test cubin)."""
import re,sys,collections
lines=open(sys.argv[1]).read().split('\n')
ins=[];labels={}
cur_label=None
for l in lines:
    m=re.match(r'^\.(L_x_\d+):',l.strip())
    if m: labels['.'+m.group(1)]=len(ins); continue
    m=re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);',l)
    if m:
        txt=m.group(2).strip()
        t=txt
        if t.startswith('@'): t=t.split(None,1)[1]
        op=t.split()[0]
        ins.append((int(m.group(1),16),op,txt))
loops=[]
for idx,(a,op,txt) in enumerate(ins):
    if op.startswith('BRA'):
        m=re.search(r'`\((\.L_x_\d+)\)',txt)
        if m and m.group(1) in labels and labels[m.group(1)]<=idx:
            loops.append((idx-labels[m.group(1)],labels[m.group(1)],idx))
loops.sort(reverse=True)
print('loops (len,start,end):',loops[:6])
L,s,e=loops[0]
c=collections.Counter(op.split('.')[0] for _,op,_ in ins[s:e+1])
print('static loop',L+1,'instrs'); print(c.most_common(30))
