"""The file guard: text files under declared roots, opened race-free and replaced atomically.

The one way Helm touches a user's files for someone else, shared by the ``files`` kind, coding
agents and the command line: ``guard`` (the API: ``FileGuard``, ``locate``, ``folder_holds``),
``safe`` (folders and files opened without following a link), ``reading``, ``writing`` and
``ledger`` (reads, atomic replacement and the temp files a write leaves), ``diff`` (what a change
shows). No kind is imported here: removing a kind leaves the guard whole.
"""
