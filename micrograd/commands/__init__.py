"""The `micrograd` command (cli.py) and each subcommand's command line in a module of its
own: demo, graph, playground, grade, course, site."""
