def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "e2e: end-to-end tests that drive real editors (skipped unless SHADERLINT_E2E=1)",
    )
