"""The walkthrough: a lesson one step per screen.

Its decisions are a pure state machine: `machine` (moving between steps, whose news is whose)
over the rules of each kind of step, found by the table in `kinds` (`quiz`, `exercise`,
`predict`, `parsons`, `demo`, and `rules` for slides, which also holds what every kind's rules
answer), the state they keep (`state`), what passes between the machine and its shell
(`events`) and the keys read as events (`input`). Its shell does the I/O around them: `shell`
runs the loop and carries out the effects, `background` runs checks and snippets in a thread.
The screens are drawn by `gradtutor.ui.step_screens` and `gradtutor.ui.walk_screen`.
"""
