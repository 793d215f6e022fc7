"""The process runtime: starting, limiting, confining, talking to and ending the processes that
run learner code (and an author's, for `validate`). What they report is judged by
gradtutor.checking, which starts no process."""
