"""What a serving framework's step annotation says: phase, requests and token sums.

Serving engines mark each scheduler step with a ``record_function`` range (a
``user_annotation`` in the trace). The names read here, and the formats TraceLens documents
(AMD-AGI/TraceLens ``docs/conceptual/inference-analysis.md`` and its parser
``TraceLens/TraceUtils/annotation_utils.py``):

- vLLM, detailed (TraceLens's patch): ``execute_<T>_context_<R_C>(sq<ΣNq>sk<ΣNkv>sqsq<ΣNq²>
  sqsk<ΣNq·Nkv>)_generation_<R_G>(sq…sk…sqsq…sqsk…)``; context requests are prefill
  requests, generation requests decode ones, each group with its sums of query tokens, KV
  tokens, squared query tokens and query × KV tokens;
- vLLM, native: ``execute_context_<R_C>(<ΣNq>)_generation_<R_G>(<ΣNq>)``;
- SGLang: ``step[EXTEND bs=15 toks=15360]``, ``step[DECODE bs=64]``, ``step[MIXED bs=2 c=1
  g=1 …]``, with the ``c_sq=… c_sqsq=…`` / ``g_sq=…`` sums in the detailed form;
- ATOM: ``prefill[bs=2 tok=14721 …]``, ``decode[bs=64 tok=64 …]`` (``bs=117/128``: the real
  batch before the graph's padding).

Unlike TraceLens, which reads a part it cannot parse as 0, a part that is missing or not a
number here is None (unknown): a request count of 0 is a claim, and a garbled annotation must
not make one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PREFILL, DECODE, MIXED = "prefill", "decode", "mixed"
PHASES = (PREFILL, DECODE, MIXED)

# The step annotations, by framework. Each is matched at the start of a name.
VLLM_STEP = re.compile(r"execute_(?:\d+_)?context_")
SGLANG_STEP = re.compile(r"step\[(EXTEND|DECODE|MIXED|PREFILL|IDLE)\b([^\]]*)\]?")
ATOM_STEP = re.compile(r"(prefill|decode)\[(.*?)\]?$")

_VLLM_GROUP = r"{name}_(\d+)?\(([^)]*)\)?"
_VLLM_SUMS = re.compile(r"^sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)$")
_KV = re.compile(r"(\w+)=(\d+)(?:/\d+)?")


@dataclass(frozen=True)
class Group:
    """The requests of one kind (prefill or decode) in a step, as the annotation gives them.

    Every field is None where the annotation does not record it.

    Attributes
    ----------
    requests : int or None
    q_tokens : int or None
        Σ N_Q: the query tokens the step computes for these requests.
    kv_tokens : int or None
        Σ N_KV: the tokens each request's queries attend to (its cached KV and itself).
    q_sq : int or None
        Σ N_Q².
    q_kv : int or None
        Σ N_Q · N_KV.
    """

    requests: int | None = None
    q_tokens: int | None = None
    kv_tokens: int | None = None
    q_sq: int | None = None
    q_kv: int | None = None


NO_GROUP = Group()


@dataclass(frozen=True)
class StepAnnotation:
    """One parsed step annotation.

    Attributes
    ----------
    framework : str
        ``vLLM``, ``SGLang`` or ``ATOM``.
    phase : str or None
        ``prefill``, ``decode`` or ``mixed``; None when the annotation does not say
        (an SGLang ``IDLE`` step, or counts that are unknown).
    prefill, decode : Group
        The prefill (context, extend) and decode (generation) requests.
    batch : int or None
        The requests in the step, where the annotation gives the total.
    """

    framework: str
    phase: str | None
    prefill: Group
    decode: Group
    batch: int | None = None

    @property
    def requests(self) -> int | None:
        """All requests of the step, or None when a group's count is unknown."""
        if self.batch is not None:
            return self.batch
        return _sum(self.prefill.requests, self.decode.requests)

    @property
    def tokens(self) -> int | None:
        """The query tokens the step computed (prefill and decode), or None when unknown."""
        return _sum(self.prefill.q_tokens, self.decode.q_tokens)


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def is_step_annotation(name: str) -> bool:
    """Whether ``name`` is a serving step's annotation of a known framework."""
    return parse_step(name) is not None


def parse_step(name: str) -> StepAnnotation | None:
    """Parse a step annotation; None when ``name`` is not one.

    Never raises: missing or garbled parts make the fields they carry None.

    Examples
    --------
    >>> a = parse_step("step[EXTEND bs=15 toks=15360]")
    >>> a.phase, a.prefill.requests, a.tokens
    ('prefill', 15, 15360)
    """
    if VLLM_STEP.match(name):
        return _vllm(name)
    if (m := SGLANG_STEP.match(name)) is not None:
        return _sglang(m.group(1), m.group(2))
    if (m := ATOM_STEP.match(name)) is not None:
        return _atom(m.group(1), m.group(2))
    return None


def _vllm(name: str) -> StepAnnotation:
    groups = []
    for part in ("context", "generation"):
        m = re.search(_VLLM_GROUP.format(name=part), name)
        if m is None:
            groups.append(NO_GROUP)
            continue
        requests, inside = _int(m.group(1)), m.group(2)
        sums = _VLLM_SUMS.match(inside)
        if sums is not None:  # detailed: sq, sk, sqsq, sqsk
            q, kv, qq, qkv = (int(x) for x in sums.groups())
            groups.append(Group(requests, q, kv, qq, qkv))
        else:  # native: (ΣNq) alone, or something unreadable
            groups.append(Group(requests, _int(inside)))
    prefill, decode = groups
    return StepAnnotation("vLLM", _phase(prefill.requests, decode.requests), prefill, decode)


def _phase(prefill: int | None, decode: int | None) -> str | None:
    """The phase from the two request counts; None when it cannot be told."""
    if prefill is None or decode is None:
        # One known count > 0 with the other unknown still does not say whether it mixes.
        return None
    if prefill and decode:
        return MIXED
    if prefill:
        return PREFILL
    return DECODE if decode else None


def _sglang(mode: str, body: str) -> StepAnnotation:
    kv = {k: int(v) for k, v in _KV.findall(body)}
    bs = kv.get("bs")
    c = Group(kv.get("c"), kv.get("c_sq"), kv.get("c_sk"), kv.get("c_sqsq"), kv.get("c_sqsk"))
    g = Group(kv.get("g"), kv.get("g_sq"), kv.get("g_sk"), kv.get("g_sqsq"), kv.get("g_sqsk"))
    if mode == "DECODE":
        # One new token a request unless the detailed sums say more (speculative decoding).
        q = g.q_tokens if g.q_tokens is not None else bs
        g = Group(bs, q, g.kv_tokens, g.q_sq, g.q_kv)
        return StepAnnotation("SGLang", DECODE, Group(0, 0, 0, 0, 0), g, bs)
    if mode in ("EXTEND", "PREFILL"):
        q = c.q_tokens if c.q_tokens is not None else kv.get("toks")
        c = Group(bs, q, c.kv_tokens, c.q_sq, c.q_kv)
        return StepAnnotation("SGLang", PREFILL, c, Group(0, 0, 0, 0, 0), bs)
    if mode == "MIXED":
        return StepAnnotation("SGLang", _phase(c.requests, g.requests) or MIXED, c, g, bs)
    return StepAnnotation("SGLang", None, NO_GROUP, NO_GROUP, bs)  # IDLE


def _atom(kind: str, body: str) -> StepAnnotation:
    kv = {k: int(v) for k, v in _KV.findall(body)}
    group = Group(kv.get("bs"), kv.get("tok"), kv.get("sk"), kv.get("sqsq"), kv.get("sqsk"))
    none = Group(0, 0, 0, 0, 0)
    if kind == "prefill":
        return StepAnnotation("ATOM", PREFILL, group, none, kv.get("bs"))
    return StepAnnotation("ATOM", DECODE, none, group, kv.get("bs"))
