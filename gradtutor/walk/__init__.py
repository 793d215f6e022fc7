"""The walkthrough: a lesson one step per screen.

Its decisions are a pure state machine: `machine` (moving between steps, whose news is whose)
over the rules of each kind of step, found by the table in `kinds` (`quiz`, `exercise`,
`predict`, `parsons`, `demo`, and `rules` for slides, which also holds what every kind's rules
answer), the state they keep (`state`), what passes between the machine and its shell
(`events`) and the keys read as events (`input`); `background` runs checks and snippets in
a thread. Its shell, `gradtutor.ui.walkthrough`, runs the loop and carries out the effects,
and `gradtutor.ui.step_screens` and `gradtutor.ui.walk_screen` draw the screens: nothing
here imports `gradtutor.ui`.
"""
