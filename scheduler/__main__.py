from scheduler.main import main

main()
