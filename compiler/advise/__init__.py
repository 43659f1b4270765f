"""The advisor: findings about an Exploration, ranked (``diagnose``); one module per
family of problems."""
