"""The transports' room: the pages as sent (`pages`), the web server (`server`, `web`), the widget
(`widgets`), the static site's worker (`worker`), their messages (`messages`), Jupyter's proxy
(`jupyter`). It may import the other rooms and the playground's top (`views`, `limits`, `errors`).
"""
