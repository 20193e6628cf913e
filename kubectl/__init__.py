"""mini-kubectl: a kubectl clone on top of `client/`, its commands declared typer-style on click.

kubectl knows surprisingly little. It does not know how to print a Pod (the API server sends a
ready-made Table), nor what `po` means without asking discovery (here: the shared kind registry,
`api.registry`, which is what our discovery serves anyway). What it does know lives here, one
verb family per module:

    main.py        the app; global flags (-s, --kubeconfig, -n, --context) anywhere in argv, and
                   only the invoked verb's module imported (start-up time is kubectl's feature)
    commandline.py typer's Typer/Option/Argument built straight on click (no pydantic at start-up)
    generators.py  the objects `create deployment|service|configmap|...` build
    dryrun.py      --dry-run=client|server for the verbs that write
    cli.py         global state, the async runner, and kubectl's error wording and exit codes
    resources.py   `deploy,svc`, `deploy/web`, `all`: turning arguments into resource types
    manifests.py   `-f FILE|DIR|-`: multi-document YAML, and kubectl's errors for bad input
    printing/      tables (tabwriter layout), -o yaml|json|name|jsonpath
    describe/      the `describe` layouts (Name:, Labels:, ..., Events:)
    cmd_*.py       the verbs
"""
