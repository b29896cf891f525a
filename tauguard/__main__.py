from tauguard.cli.main import main

main()
