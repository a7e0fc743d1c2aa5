"""Helpers of test_fault_injection.py: the policy model (model.py) and the seeded script
generator (generate.py). The C host it runs is fault_host.c (built into CURLRETRY_FAULTS_DIR)."""
