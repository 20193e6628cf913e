from kube_proxy.main import main

main()
