from cluster_dns.main import main

main()
