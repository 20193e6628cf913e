from tests.support.fixtures import api, apiserver  # noqa: F401 - shared fixtures
