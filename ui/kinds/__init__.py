"""The Qt parts of kinds that need more than their data (``broker/kinds/<kind>/``) gives.

``ui/kinds/<kind>/`` (the kind's name, ``-`` as ``_``) may export
``settings_page(section, backend, parent) -> ProfilePage``; Settings → Connections uses it in
place of the generic page for that kind's form. Nothing here names a kind.
"""
