from gw_client.cli import main

main()
