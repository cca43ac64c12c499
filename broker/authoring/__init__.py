"""What Helm's author tools decide, without Qt: fixtures and their replay, hints about a call,
what changed between two reviews, and what an extension's connections use in a home."""
