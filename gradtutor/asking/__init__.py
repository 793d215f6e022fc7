"""Answering a learner's own question from the course, offline: words.py (text to search
terms, English and Chinese), index.py (the course's steps as searchable documents),
pasted.py (PyTorch's messages, matched whatever their names and numbers), topics.py (what
the course does not teach, by name), guard.py (no answer carries an exercise's fix), and
answer.py (a question, and the learner's moment, to an answer that cites steps). Pure: the
shell loads the course and shows the answer.
"""
