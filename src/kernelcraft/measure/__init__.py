"""The judge: correctness (verify), speed (timing), isolation (sandbox, worker)."""
