"""The transports' room: the local web server (`server`, `web`), the notebook widget (`widgets`),
the static site's worker (`worker`), their messages (`messages`) and Jupyter's proxy (`jupyter`).
It may import the other rooms and the playground's top (`views`, `limits`, `errors`).
"""
