from metrics_server.main import main

main()
