import time, statistics, torch, rime, gc
from rime import functional as F
torch.manual_seed(0)
dev="cuda"; dt=torch.bfloat16
q,k,v,do=(torch.randn((1,1,64,128),dtype=dt,device=dev) for _ in range(4))
bias=torch.randn((1,1,64,64),dtype=dt,device=dev)
o,stats=rime.sdpa(q,k,v,causal=True,bias=bias)
def t(name, fn, n=2000):
    for _ in range(50): fn()
    torch.cuda.synchronize(); ts=[]
    for i in range(n):
        if i%64==0: torch.cuda.synchronize()
        a=time.perf_counter_ns(); fn(); ts.append(time.perf_counter_ns()-a)
    torch.cuda.synchronize()
    ts.sort(); print(f"{name:40s} median {ts[n//2]/1e3:7.1f} p10 {ts[n//10]/1e3:7.1f} p90 {ts[9*n//10]/1e3:7.1f} us")
g=F.backward_outputs(q,k,v,bias)
ins=[("q",q),("k",k),("v",v),("o",o),("do",do),("stats",stats),("bias",bias)]
outs=list(zip(("dq","dk","dv","dbias"),g))
kw=dict(scale=None,left_bound=None,right_bound=0,bottom_right=False,alibi=False,deterministic=False)
t("bwd full", lambda: rime.sdpa_backward(q,k,v,o,do,stats,causal=True,bias=bias,dbias=True))
t("bwd sdpa_call same outs, 6 kwargs", lambda: rime._native.sdpa_call(True,ins,outs,**kw))
t("bwd sdpa_call same outs, right_bound", lambda: rime._native.sdpa_call(True,ins,outs,right_bound=0))
def fresh():
    gg=F.backward_outputs(q,k,v,bias)
    rime._native.sdpa_call(True,ins,list(zip(("dq","dk","dv","dbias"),gg)),**kw)
t("bwd alloc + sdpa_call", fresh)
t("bwd backward_outputs", lambda: F.backward_outputs(q,k,v,bias))
t("bwd full, deterministic", lambda: rime.sdpa_backward(q,k,v,o,do,stats,causal=True,bias=bias,dbias=True,deterministic=True))
gc.disable()
t("bwd full, gc off", lambda: rime.sdpa_backward(q,k,v,o,do,stats,causal=True,bias=bias,dbias=True))
gc.enable()
t("fwd full", lambda: rime.sdpa(q,k,v,causal=True,bias=bias))
t("torch sdpa bwd-ish: empty_like x4", lambda: [torch.empty_like(x) for x in (q,k,v,bias)])
print(rime.plan_cache_info())
