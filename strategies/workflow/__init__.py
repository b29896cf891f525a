"""`workflow`: PolicyGuide-style workflow guide (shared/papers/workflow-guide_policyguide.md)."""
