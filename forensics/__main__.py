from forensics.cli.main import main

main()
