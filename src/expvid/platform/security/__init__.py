"""Accounts and sessions: password hashing, database-backed sessions with CSRF tokens, throttling."""
