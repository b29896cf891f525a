"""A learned pre-action gate over a structured decision state (issue 14).

After "When Retrieval Metrics Mislead: Measuring Policy Signal in Long-Horizon Tool-Use
Agents" (``shared/papers/classifier-gate_when-retrieval-metrics-mislead.md``, cited below as
*the paper*): a decision state {request, evidence, applicable policy clause, action class} is
built from what is visible at the checkpoint, the clause is retrieved from the domain's
clause table, and a classifier says allow / verify / refuse.

Modules, one concept each:

- :mod:`state`: the decision state and its representations (raw, masked, structured,
  raw+policy);
- :mod:`clauses`: the clause pool (the domain's clause table) and a probe's gold clause ids;
- :mod:`retrieval`: BM25, TF-IDF cosine and sentence-embedding clause retrievers;
- :mod:`dataset`: probe files -> decision states (replayed in tau2) and the probe-set hash;
- :mod:`model`: the scikit-learn classifier and its artifact (joblib + training metadata);
- :mod:`llm`: the LLM backend (prompt over the structured state, JSON answer, fail-closed);
- :mod:`metrics`: per-class scores, task-clustered bootstrap CIs, paired comparisons;
- :mod:`experiments`: the paper's Table 1 analogue, representation ablation, recall@k and the
  gold-injection sweep.

Nothing here imports tau2 or litellm at module level except :mod:`dataset` (which needs the
environments to replay probe prefixes).
"""
