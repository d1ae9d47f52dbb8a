-- POST the body in BODY with the headers given by -H.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
