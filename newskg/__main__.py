from newskg.cli.app import app

app()
