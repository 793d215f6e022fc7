"""Learner files the checker tests run, kept apart from the test modules so that other tests
(tests/test_pass_words.py: every correct style's pass words) read them without importing a
test module. Correct solutions are in the styles learners write them."""

from __future__ import annotations

BASIC_EXERCISE_OF = {"read-grad": "read-grad", "none-before-backward": "none-before-backward",
                     "two-backwards": "two-backwards", "set-to-none": "clear-grads"}

# The first four exercises' (tests/test_checkers_basic.py), keyed by the checker's label
# (BASIC_EXERCISE_OF gives its exercise).
BASIC_STYLES: dict[str, dict[str, str]] = {
    "read-grad": {
        "method": """
            def read_grad(w, loss_fn):
                loss = loss_fn(w)
                loss.backward()
                return w.grad
        """,
        "autograd-backward": """
            import torch

            def read_grad(w, loss_fn):
                torch.autograd.backward(loss_fn(w))
                return w.grad
        """,
        "clone": """
            def read_grad(w, loss_fn):
                loss_fn(w).backward()
                return w.grad.clone()
        """,
        "explicit-gradient": """
            import torch

            def read_grad(w, loss_fn):
                loss = loss_fn(w)
                loss.backward(torch.ones_like(loss))
                return w.grad.detach()
        """,
        "inputs": """
            def read_grad(w, loss_fn):
                loss_fn(w).backward(inputs=[w])
                grad = w.grad
                return grad
        """,
    },
    "none-before-backward": {
        "reads": """
            def grad_before_and_after(w, loss_fn):
                before = w.grad
                loss_fn(w).backward()
                return before, w.grad
        """,
        "clone-after": """
            def grad_before_and_after(w, loss_fn):
                before = w.grad
                loss = loss_fn(w)
                loss.backward()
                after = w.grad.clone()
                return (before, after)
        """,
        "list": """
            import torch

            def grad_before_and_after(w, loss_fn):
                readings = [w.grad]
                torch.autograd.backward(loss_fn(w))
                readings.append(w.grad)
                return readings
        """,
        "guarded-copy": """
            def grad_before_and_after(w, loss_fn):
                before = None if w.grad is None else w.grad.clone()
                loss_fn(w).backward()
                return before, w.grad
        """,
        "namedtuple": """
            from collections import namedtuple

            Readings = namedtuple("Readings", "before after")

            def grad_before_and_after(w, loss_fn):
                before = w.grad
                loss_fn(w).backward()
                return Readings(before, w.grad)
        """,
    },
    "two-backwards": {
        "two-losses": """
            def grad_after_two_backwards(w, loss_fn):
                loss_fn(w).backward()
                loss_fn(w).backward()
                return w.grad
        """,
        "loop": """
            def grad_after_two_backwards(w, loss_fn):
                for _ in range(2):
                    loss = loss_fn(w)
                    loss.backward()
                return w.grad
        """,
        "retain-graph": """
            def grad_after_two_backwards(w, loss_fn):
                loss = loss_fn(w)
                loss.backward(retain_graph=True)
                loss.backward()
                return w.grad
        """,
        "autograd-backward": """
            import torch

            def grad_after_two_backwards(w, loss_fn):
                torch.autograd.backward(loss_fn(w))
                torch.autograd.backward(loss_fn(w))
                return w.grad.clone()
        """,
    },
    "set-to-none": {
        "zero-grad": """
            def clear_grads(optimizer):
                optimizer.zero_grad()
        """,
        "zero-grad-explicit": """
            def clear_grads(optimizer):
                optimizer.zero_grad(set_to_none=True)
        """,
        "loop": """
            def clear_grads(optimizer):
                for group in optimizer.param_groups:
                    for p in group["params"]:
                        p.grad = None
        """,
        "del": """
            def clear_grads(optimizer):
                params = [p for group in optimizer.param_groups for p in group["params"]]
                for p in params:
                    del p.grad
                return optimizer
        """,
    },
}

# The training-loop exercises' (tests/test_checkers_loops.py), keyed by exercise.
LOOP_STYLES: dict[str, dict[str, str]] = {
    "accumulate-micro-batches": {
        "model-zero-grad-keeps-zeros": """
            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                model.zero_grad(set_to_none=False)
                for x, y in micro_batches:
                    loss = loss_fn(model(x), y) * (1 / len(micro_batches))
                    loss.backward()
                optimizer.step()
        """,
        "scales-grads-before-step": """
            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                optimizer.zero_grad()
                for x, y in micro_batches:
                    loss_fn(model(x), y).backward()
                for p in model.parameters():
                    p.grad /= len(micro_batches)
                optimizer.step()
        """,
        "clears-just-before-the-first": """
            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                n = len(micro_batches)
                for i, (x, y) in enumerate(micro_batches):
                    loss = loss_fn(model(x), y) / n
                    if i == 0:
                        for p in model.parameters():
                            p.grad = None
                    loss.backward()
                optimizer.step()
        """,
        "weights-by-rows": """
            import torch

            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                optimizer.zero_grad(set_to_none=True)
                total = sum(len(x) for x, _ in micro_batches)
                for x, y in micro_batches:
                    torch.autograd.backward(loss_fn(model(x), y) * len(x) / total)
                optimizer.step()
        """,
        # torch.optim's closure API: step() runs the closure, then updates
        "closure": """
            def accumulated_step(model, optimizer, loss_fn, micro_batches):
                def closure():
                    optimizer.zero_grad()
                    total = 0.0
                    for x, y in micro_batches:
                        loss = loss_fn(model(x), y) / len(micro_batches)
                        loss.backward()
                        total += loss.item()
                    return total

                optimizer.step(closure)
        """,
    },
    "fix-the-loop": {
        "model-zero-grad": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    model.zero_grad()
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
                    losses.append(loss.item())
                return losses
        """,
        "keeps-zeros": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    optimizer.zero_grad(set_to_none=False)
                    out = model(x)
                    loss = loss_fn(out, y)
                    loss.backward()
                    optimizer.step()
                    losses.append(float(loss))
                return losses
        """,
        "clears-right-before-backward": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    loss = loss_fn(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    losses.append(loss.detach().item())
                return losses
        """,
        "none-by-hand": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    for p in model.parameters():
                        p.grad = None
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.step()
                    losses.append(loss.item())
                return [float(v) for v in losses]
        """,
        "closure": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    def closure():
                        optimizer.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        return loss

                    losses.append(optimizer.step(closure).item())
                return losses
        """,
        "closure-by-keyword-model-zero-grad": """
            def train(model, optimizer, loss_fn, batches):
                losses = []
                for x, y in batches:
                    def closure(x=x, y=y):
                        model.zero_grad()
                        loss = loss_fn(model(x), y)
                        loss.backward()
                        losses.append(loss.item())
                        return loss

                    optimizer.step(closure=closure)
                return losses
        """,
    },
    "manual-sgd": {
        "zero-after-update": """
            import torch

            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    loss_fn(w, batch).backward()
                    with torch.no_grad():
                        w -= lr * w.grad
                    w.grad.zero_()
        """,
        "sub-in-place": """
            import torch

            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    loss = loss_fn(w, batch)
                    loss.backward()
                    with torch.no_grad():
                        w.sub_(lr * w.grad)
                    w.grad = None
        """,
        # .data is the older idiom: it bypasses autograd, but keeps w the same leaf.
        "data": """
            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    w.grad = None
                    loss_fn(w, batch).backward()
                    w.data.sub_(lr * w.grad)
        """,
        "copy-and-autograd-backward": """
            import torch

            def manual_sgd(w, loss_fn, batches, lr):
                for batch in batches:
                    if w.grad is not None:
                        w.grad.zero_()
                    torch.autograd.backward(loss_fn(w, batch))
                    with torch.no_grad():
                        w.copy_(w - lr * w.grad)
        """,
    },
    "grad-health": {
        "any-and-isnan": """
            import torch

            def grad_report(model, max_norm):
                report = {}
                for name, p in model.named_parameters():
                    g = p.grad
                    if g is None or not g.any():
                        report[name] = "dead"
                    elif torch.isnan(g).any() or torch.isinf(g).any():
                        report[name] = "exploding"
                    elif torch.linalg.vector_norm(g) > max_norm:
                        report[name] = "exploding"
                    else:
                        report[name] = "ok"
                return report
        """,
        "helper-and-comprehension": """
            import torch

            def health(grad, max_norm):
                if grad is None or torch.count_nonzero(grad) == 0:
                    return "dead"
                norm = grad.norm(2)
                if not torch.isfinite(norm) or norm.item() > max_norm:
                    return "exploding"
                return "ok"

            def grad_report(model, max_norm):
                return {name: health(p.grad, max_norm) for name, p in model.named_parameters()}
        """,
        "float64-sum-of-squares": """
            import math
            import torch

            def grad_report(model, max_norm):
                report = {}
                for name, p in model.named_parameters():
                    if p.grad is None:
                        report[name] = "dead"
                        continue
                    g = p.grad.double()
                    if torch.all(g == 0):
                        report[name] = "dead"
                    elif not bool(torch.isfinite(g).all()):
                        report[name] = "exploding"
                    else:
                        norm = math.sqrt(float((g * g).sum()))
                        report[name] = "exploding" if norm > max_norm else "ok"
                return report
        """,
    },
}

# The backward lesson's exercises (tests/test_backward_exercises.py): label -> (exercise,
# learner file, the check that must fail or None for a pass, words).
BACKWARD_FILES: dict[str, tuple[str, str, str | None, str]] = {
    "vector:autograd-backward": ("backward-a-vector", """
        import torch

        def grad_of_errors(w, x, y):
            errors = (w * x - y) ** 2
            torch.autograd.backward(errors, grad_tensors=torch.ones_like(errors))
            return w.grad
        """, None, ""),
    "vector:list-of-one": ("backward-a-vector", """
        import torch

        def grad_of_errors(w, x, y):
            errors = (w * x - y) ** 2
            torch.autograd.backward([errors], [torch.ones_like(errors)])
            return w.grad
        """, None, ""),
    "vector:sum-first": ("backward-a-vector", """
        def grad_of_errors(w, x, y):
            errors = (w * x - y) ** 2
            errors.sum().backward()
            return w.grad
        """, "from-the-vector", "started from one number"),
    "vector:half-of-it": ("backward-a-vector", """
        import torch

        def grad_of_errors(w, x, y):
            errors = ((w * x - y) ** 2).flatten()
            half = len(errors) // 2
            errors[:half].backward(gradient=torch.ones(half, dtype=errors.dtype))
            return w.grad
        """, "from-the-vector", "entries, and errors has"),
    "twice:two-forward-passes": ("backward-twice-one-graph", """
        def backward_twice(w, loss_fn):
            loss_fn(w).backward()
            loss_fn(w).backward()
            return w.grad
        """, "one-graph", "loss_fn ran 2 times"),
    "twice:one-graph": ("backward-twice-one-graph", """
        def backward_twice(w, loss_fn):
            loss = loss_fn(w)
            loss.backward(retain_graph=True)
            loss.backward()
            return w.grad
        """, None, ""),
}

# Real mistakes beyond the first four exercises' mutants (tests/test_checkers_basic.py):
# (checker, source, the check that fails, words its message must contain).
BASIC_MISTAKES: dict[str, tuple[str, str, str, str]] = {
    "read-grad/clone-not-called": ("read-grad", """
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return w.grad.clone
    """, "returns-grad", r"You returned `w\.grad\.clone` itself, a function or method that was "
                         r"never called: without parentheses"),
    "read-grad/backward-not-called": ("read-grad", """
        def read_grad(w, loss_fn):
            loss = loss_fn(w)
            loss.backward
            return w.grad
    """, "runs-backward", r"never ran backward.*A line of your function names `loss.backward` "
                         r"without calling it, so that line does nothing"),
    "read-grad/tolist": ("read-grad", """
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return w.grad.tolist()
    """, "returns-grad", r"a Python list, not a tensor"),
    "read-grad/returns-w": ("read-grad", """
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
            return w
    """, "returns-grad", r"w itself"),
    "read-grad/item-of-loss": ("read-grad", """
        def read_grad(w, loss_fn):
            loss = loss_fn(w)
            loss.backward()
            return loss.item()
    """, "returns-grad", r"the loss as a Python float"),
    "read-grad/scaled-loss": ("read-grad", """
        def read_grad(w, loss_fn):
            (2 * loss_fn(w)).backward()
            return w.grad
    """, "returns-grad", r"2x the gradient, though backward ran once"),
    "read-grad/read-too-early": ("read-grad", """
        def read_grad(w, loss_fn):
            grad = w.grad
            loss_fn(w).backward()
            return grad
    """, "returns-grad", r"None: w.grad was read before backward filled it"),
    "read-grad/no-return": ("read-grad", """
        def read_grad(w, loss_fn):
            loss_fn(w).backward()
    """, "returns-grad", r"no `return`"),
    "read-grad/returns-backward": ("read-grad", """
        def read_grad(w, loss_fn):
            loss = loss_fn(w)
            return loss.backward()
    """, "returns-grad", r"^You returned None, which is what backward\(\) returns: .*Look at "
                         r"what your function returns after the backward call\.$"),
    "read-grad/returns-backward-of-the-call": ("read-grad", """
        def read_grad(w, loss_fn):
            return loss_fn(w).backward()
    """, "returns-grad", r"^You returned None, which is what backward\(\) returns"),
    "read-grad/autograd-grad": ("read-grad", """
        import torch

        def read_grad(w, loss_fn):
            (grad,) = torch.autograd.grad(loss_fn(w), w)
            return grad
    """, "runs-backward", r"w\.grad stayed None: torch\.autograd\.grad, for one, returns the "
                          r"gradient without storing it in \.grad"),
    "two-backwards/same-loss-twice": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            loss = loss_fn(w)
            loss.backward()
            loss.backward()
            return w.grad
    """, "graph-freed", r"already freed: backward\(\) frees the tensors its graph saved.*"
                        r"look at where your second pass gets its loss from\.$"),
    "none-before-backward/single-value": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            loss_fn(w).backward()
            return w.grad
    """, "returns-pair", r"a single tensor.*not a pair"),
    "none-before-backward/dict": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            before = w.grad
            loss_fn(w).backward()
            return {"before": before, "after": w.grad}
    """, "returns-pair", r"You returned a dict, not a pair"),
    "none-before-backward/is-none-test": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            before = w.grad is None
            loss_fn(w).backward()
            return before, w.grad
    """, "before-is-none", r"a bool.*`w.grad is None`"),
    "none-before-backward/both-after": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            loss_fn(w).backward()
            return w.grad, w.grad
    """, "before-is-none", r"read w.grad after backward.*same tensor"),
    "none-before-backward/after-read-early": ("none-before-backward", """
        def grad_before_and_after(w, loss_fn):
            before = w.grad
            after = w.grad
            loss_fn(w).backward()
            return before, after
    """, "after-is-grad", r"`after` was None: w.grad was read before backward"),
    "two-backwards/scaled-loss": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            (2 * loss_fn(w)).backward()
            return w.grad
    """, "backward-twice", r"backward ran once.*doubled it by hand"),
    "two-backwards/summed-losses": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            (loss_fn(w) + loss_fn(w)).backward()
            return w.grad
    """, "backward-twice", r"backward ran once"),
    "two-backwards/cleared-at-the-end": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            loss_fn(w).backward()
            loss_fn(w).backward()
            w.grad = None
            return w.grad
    """, "doubled", r"cleared it after the backward calls"),
    "two-backwards/copied-then-cleared": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            loss_fn(w).backward()
            loss_fn(w).backward()
            grad = w.grad
            w.grad = None
            return grad
    """, "grad-kept", r"afterwards w.grad was None"),
    "two-backwards/four-passes": ("two-backwards", """
        def grad_after_two_backwards(w, loss_fn):
            for _ in range(4):
                loss_fn(w).backward()
            return w.grad
    """, "doubled", r"4x the gradient: backward ran 4 times"),
    "set-to-none/step-only": ("set-to-none", """
        def clear_grads(optimizer):
            optimizer.step()
    """, "all-none", r"step\(\) updates the weights.*does not clear"),
    "set-to-none/last-group-only": ("set-to-none", """
        def clear_grads(optimizer):
            for p in optimizer.param_groups[-1]["params"]:
                p.grad = None
    """, "all-none", r"first.*param groups? kept their gradients"),
    "set-to-none/first-param-of-each-group": ("set-to-none", """
        def clear_grads(optimizer):
            for group in optimizer.param_groups:
                group["params"][0].grad = None
    """, "all-none", r"Only the first parameter of each param group"),
    "set-to-none/zeros-like": ("set-to-none", """
        import torch

        def clear_grads(optimizer):
            for group in optimizer.param_groups:
                for p in group["params"]:
                    p.grad = torch.zeros_like(p)
    """, "all-none", r"every .grad was a tensor of zeros"),
    "set-to-none/emptied-groups": ("set-to-none", """
        def clear_grads(optimizer):
            optimizer.param_groups.clear()
            optimizer.zero_grad()
    """, "all-none", r"kept its gradient"),
}

LEFTOVERS_AND_BATCH_1 = (r"^Step 1 used the leftover gradients from before your function was "
                         r"called plus batch 1's gradient: nothing cleared \.grad before the "
                         r"first backward pass\.$")

# More mistakes learners make in the training loops (tests/test_checkers_loops.py):
# (exercise, source, the check that must fail, words it says).
LOOP_MISTAKES: dict[str, tuple[str, str, str, str]] = {
    "accumulate/not-divided-message": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            for x, y in micro_batches:
                loss_fn(model(x), y).backward()
            optimizer.step()
    """, "step-gradient", r"^Your loss was not divided by the number of micro-batches: the step "
                          r"used a gradient [2-5]× too large\.$"),
    "accumulate/divides-twice": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            n = len(micro_batches)
            for x, y in micro_batches:
                (loss_fn(model(x), y) / n).backward()
            for p in model.parameters():
                p.grad /= n
            optimizer.step()
    """, "step-gradient", r"[2-5]× too small: the micro-batches' losses were scaled down twice"),
    "accumulate/clears-after-backward": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            n = len(micro_batches)
            for x, y in micro_batches:
                (loss_fn(model(x), y) / n).backward()
            optimizer.zero_grad()
            optimizer.step()
    """, "step-gradient", r"\.grad was cleared after backward"),
    "accumulate/clears-in-the-loop-message": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            for x, y in micro_batches:
                optimizer.zero_grad()
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            optimizer.step()
    """, "step-gradient", r"only the last micro-batch's gradient: \.grad was cleared inside the "
                          r"loop"),
    "accumulate/leftovers-message": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            for x, y in micro_batches:
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            optimizer.step()
    """, "clears-leftovers", r"^The step used leftover gradients from before your function was "
                             r"called: nothing cleared them before the first backward "
                             r"pass\.$"),
    "accumulate/steps-twice": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            for x, y in micro_batches:
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            optimizer.step()
            optimizer.step()
    """, "one-step", r"optimizer\.step\(\) ran 2 times"),
    "accumulate/grads-by-hand": ("accumulate-micro-batches", """
        import torch

        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            params = list(model.parameters())
            n = len(micro_batches)
            total = [torch.zeros_like(p) for p in params]
            for x, y in micro_batches:
                grads = torch.autograd.grad(loss_fn(model(x), y) / n, params)
                total = [t + g for t, g in zip(total, grads)]
            for p, t in zip(params, total):
                p.grad = t
            optimizer.step()
    """, "backward-per-micro-batch", r"No gradient reached the parameters through backward"),
    "accumulate/closure-clears-in-the-loop": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            def closure():
                for x, y in micro_batches:
                    optimizer.zero_grad()
                    (loss_fn(model(x), y) / len(micro_batches)).backward()

            optimizer.step(closure)
    """, "step-gradient", r"only the last micro-batch's gradient: \.grad was cleared inside the "
                          r"loop"),
    "accumulate/clips-the-gradient": ("accumulate-micro-batches", """
        import torch

        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            for x, y in micro_batches:
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
            optimizer.step()
    """, "step-gradient", r"^The step used [0-9.e-]+× the whole-batch mean gradient: look at "
                          r"how much each micro-batch's loss counts; together they should make "
                          r"one batch's mean\.$"),
    "accumulate/first-micro-batch-only": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            x, y = micro_batches[0]
            loss_fn(model(x), y).backward()
            optimizer.step()
    """, "step-gradient", r"^The step's gradient is not the mean-loss gradient of all the "
                          r"micro-batches taken as one batch\.$"),
    "accumulate/zeros-before-the-step": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            for x, y in micro_batches:
                (loss_fn(model(x), y) / len(micro_batches)).backward()
            optimizer.zero_grad(set_to_none=False)
            optimizer.step()
    """, "step-gradient", r"^The step used none of your micro-batches' gradients: \.grad was "
                          r"cleared after backward\.$"),
    "accumulate/backward-twice": ("accumulate-micro-batches", """
        def accumulated_step(model, optimizer, loss_fn, micro_batches):
            optimizer.zero_grad()
            n = len(micro_batches)
            for x, y in micro_batches:
                loss = loss_fn(model(x), y) / (2 * n)
                loss.backward(retain_graph=True)
                loss.backward()
            optimizer.step()
    """, "backward-per-micro-batch", r"^backward ran (4|6|8|10) times for [2-5] micro-batches"),
    "loop/closure-never-clears": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                def closure():
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    return loss

                losses.append(optimizer.step(closure).item())
            return losses
    """, "clears-leftovers", LEFTOVERS_AND_BATCH_1),
    "loop/closure-clears-after-backward": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                def closure():
                    loss = loss_fn(model(x), y)
                    loss.backward()
                    optimizer.zero_grad()
                    return loss

                losses.append(optimizer.step(closure).item())
            return losses
    """, "per-batch-gradient", r"zero_grad\(\) ran after backward and before step\(\)"),
    "loop/classic-bug-message": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
    """, "clears-leftovers", LEFTOVERS_AND_BATCH_1),
    "loop/clears-after-step-message": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss.item())
            return losses
    """, "clears-leftovers", LEFTOVERS_AND_BATCH_1),
    "loop/step-before-backward-message": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                optimizer.step()
                loss.backward()
                losses.append(loss.item())
            return losses
    """, "backward-per-batch", r"^optimizer\.step\(\) ran before backward: step 1 had no "
                               r"backward pass before it\.$"),
    "loop/clears-between-backward-and-step": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.zero_grad(set_to_none=False)
                optimizer.step()
                losses.append(loss.item())
            return losses
    """, "per-batch-gradient", r"zero_grad\(\) ran after backward and before step\(\)"),
    "loop/backward-twice": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward(retain_graph=True)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            return losses
    """, "backward-per-batch", r"backward ran 2 times before step 1"),
    "loop/steps-once-at-the-end": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            optimizer.zero_grad()
            for x, y in batches:
                loss = loss_fn(model(x), y)
                loss.backward()
                losses.append(loss.item())
            optimizer.step()
            return losses
    """, "one-step-per-batch", r"ran 1 time for [2-5] batches"),
    "loop/returns-a-tuple": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = ()
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses += (loss.item(),)
            return losses
    """, "returns-losses", r"You returned a tuple"),
    "loop/forgets-to-return": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
    """, "returns-losses", r"^You returned None"),
    "loop/losses-after-the-step": ("fix-the-loop", """
        def train(model, optimizer, loss_fn, batches):
            losses = []
            for x, y in batches:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                losses.append(loss_fn(model(x), y).item())
            return losses
    """, "returns-losses", r"^Loss 1 you returned is not the loss of batch 1"),
    "sgd/never-clears-message": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                loss_fn(w, batch).backward()
                with torch.no_grad():
                    w -= lr * w.grad
    """, "per-batch-gradient", r"^The second update used batch 1's gradient too: nothing "
                               r"cleared w\.grad in between, and backward adds into it\.$"),
    "sgd/rebinds-outside-no-grad-message": ("manual-sgd", """
        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                loss = loss_fn(w, batch)
                loss.backward()
                w = w - lr * w.grad
    """, "stays-leaf", r"`w = w - \.\.\.` makes a new tensor and points your function's local "
                       r"name w at it\. The caller's w never changes"),
    "sgd/rebinds-inside-no-grad-message": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                loss_fn(w, batch).backward()
                with torch.no_grad():
                    w = w - lr * w.grad
    """, "stays-leaf", r"w no longer requires grad"),
    "sgd/fresh-leaf-each-time": ("manual-sgd", """
        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                loss_fn(w, batch).backward()
                w = (w - lr * w.grad).detach().requires_grad_()
    """, "stays-leaf", r"new tensor, not the w you were given"),
    "sgd/uses-an-optimizer": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            optimizer = torch.optim.SGD([w], lr=lr)
            for batch in batches:
                optimizer.zero_grad()
                loss_fn(w, batch).backward()
                optimizer.step()
    """, "no-optimizer", r"An optimizer's step\(\) ran"),
    "sgd/autograd-grad-instead-of-dot-grad": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                (grad,) = torch.autograd.grad(loss_fn(w, batch), w)
                with torch.no_grad():
                    w -= lr * grad
    """, "backward-per-batch", r"backward\(\) never filled w\.grad"),
    "sgd/uphill": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                w.grad = None
                loss_fn(w, batch).backward()
                with torch.no_grad():
                    w.add_(lr * w.grad)
    """, "update", r"added lr \* grad: w moved uphill"),
    "sgd/in-place-while-recording": ("manual-sgd", """
        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches:
                w.grad = None
                loss_fn(w, batch).backward()
                w.sub_(lr * w.grad)
    """, "update", r"PyTorch refuses to change a leaf that requires grad in place"),
    "sgd/skips-the-last-batch": ("manual-sgd", """
        import torch

        def manual_sgd(w, loss_fn, batches, lr):
            for batch in batches[:-1]:
                w.grad = None
                loss_fn(w, batch).backward()
                with torch.no_grad():
                    w -= lr * w.grad
    """, "per-batch-gradient", r"loss_fn was never called with batch [2-5]"),
    "health/no-none-check-message": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            return {name: "exploding" if p.grad.norm() > max_norm else "ok"
                    for name, p in model.named_parameters()}
    """, "classification", r"crashed on a parameter whose \.grad is None"),
    "health/norm-only-message": ("grad-health", """
        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                if p.grad is None or (p.grad == 0).all():
                    report[name] = "dead"
                else:
                    report[name] = "exploding" if p.grad.norm() > max_norm else "ok"
            return report
    """, "classification", r"nan > max_norm is False"),
    "health/total-norm": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            total = torch.cat([g.reshape(-1) for g in grads]).norm()
            report = {}
            for name, p in model.named_parameters():
                if p.grad is None or (p.grad == 0).all():
                    report[name] = "dead"
                elif not torch.isfinite(p.grad).all() or total > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"as if you compared one total norm of all the gradients "
                           r"\((nan|inf|[0-9.e+-]+)\) with max_norm"),
    # as real monitoring code does: "vanishing" below an absolute threshold
    "health/max-below-1e-6-means-dead": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                g = p.grad
                if g is None or g.abs().max() < 1e-6:
                    report[name] = "dead"
                elif not torch.isfinite(g).all() or g.norm() > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"tiny gradient \(norm [0-9.]+e-[0-9]+\), but not a zero one"),
    "health/norm-below-1e-9-means-dead": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                g = p.grad
                if g is None or g.norm() < 1e-9:
                    report[name] = "dead"
                elif not torch.isfinite(g).all() or g.norm() > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"tiny gradient \(norm [0-9.]+e-[0-9]+\), but not a zero one"),
    "health/allclose-to-zero-means-dead": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                g = p.grad
                if g is None or torch.allclose(g, torch.zeros_like(g)):
                    report[name] = "dead"
                elif not torch.isfinite(g).all() or g.norm() > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"tiny gradient \(norm [0-9.]+e-[0-9]+\), but not a zero one"),
    "health/total-norm-by-clip-grad-norm": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            params = [p for p in model.parameters() if p.grad is not None]
            total = torch.nn.utils.clip_grad_norm_(params, float("inf"))
            report = {}
            for name, p in model.named_parameters():
                if p.grad is None or not p.grad.any():
                    report[name] = "dead"
                elif not torch.isfinite(p.grad).all() or total > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"as if you compared one total norm of all the gradients "
                           r"\((nan|inf|[0-9.e+-]+)\) with max_norm"),
    "health/l1-norm": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                g = p.grad
                if g is None or (g == 0).all():
                    report[name] = "dead"
                elif not torch.isfinite(g).all() or g.abs().sum() > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"not above max_norm [0-9.]+: it is ok"),
    "health/small-means-dead": ("grad-health", """
        import torch

        def grad_report(model, max_norm):
            report = {}
            for name, p in model.named_parameters():
                g = p.grad
                if g is None or g.norm() < 1e-4:
                    report[name] = "dead"
                elif not torch.isfinite(g).all() or g.norm() > max_norm:
                    report[name] = "exploding"
                else:
                    report[name] = "ok"
            return report
    """, "classification", r"tiny gradient \(norm [0-9.e-]+\), but not a zero one"),
    "health/returns-a-list": ("grad-health", """
        def grad_report(model, max_norm):
            return [(name, "ok") for name, p in model.named_parameters()]
    """, "returns-dict", r"^You returned a list, not a dict\.$"),
    "health/booleans": ("grad-health", """
        def grad_report(model, max_norm):
            return {name: p.grad is None for name, p in model.named_parameters()}
    """, "returns-dict", r"Each value must be one of the strings .*a bool"),
    "health/module-names": ("grad-health", """
        def grad_report(model, max_norm):
            return {name: "ok" for name, _ in model.named_children()}
    """, "returns-dict", r"no entry for"),
}

# The model lesson's files (tests/test_model_facts.py): label -> (exercise, source, or
# "SOLUTION" for the exercise's own).
MODEL_FILES: dict[str, tuple[str, str]] = {
    "setup:solution": ("freeze-layer", "SOLUTION"),
    "setup:module-flag": ("freeze-layer", """
        def freeze_first_layer(model):
            model[0].requires_grad = False
        """),
    "setup:eval": ("freeze-layer", """
        def freeze_first_layer(model):
            model[0].eval()
        """),
    "setup:whole-model": ("freeze-layer", """
        def freeze_first_layer(model):
            model.requires_grad_(False)
        """),
    "setup:returns": ("freeze-layer", """
        def freeze_first_layer(model):
            model[0].requires_grad_(False)
            return 3
        """),
    "clip:solution": ("clip-and-step", "SOLUTION"),
    "clip:after-step": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
            return nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()
        """),
    "clip:leftovers": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            loss_fn(model(x), y).backward()
            total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
            return total
        """),
    "clip:each": ("clip-and-step", """
        from torch import nn

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            for p in model.parameters():
                nn.utils.clip_grad_norm_(p, max_norm)
            optimizer.step()
        """),
    "clip:no-step": ("clip-and-step", """
        import torch

        def train_step(model, optimizer, loss_fn, x, y, max_norm):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            return min(total.item(), max_norm)
        """),
    "eval:solution": ("evaluate-without-grad", "SOLUTION"),
    "eval:train-mode": ("evaluate-without-grad", """
        import torch

        def evaluate(model, loss_fn, batches):
            with torch.no_grad():
                losses = [loss_fn(model(x), y).item() for x, y in batches]
            return sum(losses)
        """),
    "eval:graph": ("evaluate-without-grad", """
        def evaluate(model, loss_fn, batches):
            model.eval()
            losses = [loss_fn(model(x), y) for x, y in batches]
            return losses[-1]
        """),
    "eval:tensor": ("evaluate-without-grad", """
        import torch

        def evaluate(model, loss_fn, batches):
            model.eval()
            with torch.no_grad():
                losses = torch.stack([loss_fn(model(x), y) for x, y in batches])
            model.train()
            return losses.mean()
        """),
    "eval:stays": ("evaluate-without-grad", """
        import torch

        def evaluate(model, loss_fn, batches):
            model.eval()
            with torch.no_grad():
                losses = [loss_fn(model(x), y).item() for x, y in batches]
            return None
        """),
    "checkpoint:solution": ("save-checkpoint", "SOLUTION"),
    "checkpoint:object": ("save-checkpoint", """
        import torch

        def save_checkpoint(model, optimizer, f):
            torch.save({"model": model, "optimizer": optimizer}, f)
        """),
    "checkpoint:model-only": ("save-checkpoint", """
        import torch

        def save_checkpoint(model, optimizer, f):
            torch.save(model.state_dict(), f)
        """),
    "checkpoint:no-optimizer": ("save-checkpoint", """
        import torch

        def save_checkpoint(model, optimizer, f):
            torch.save({"model": model.state_dict(), "step": 7}, f)
        """),
    "checkpoint:swapped": ("save-checkpoint", """
        import torch

        def save_checkpoint(model, optimizer, f):
            torch.save({"model": optimizer.state_dict(),
                        "optimizer": model.state_dict()}, f)
        """),
    "checkpoint:nothing": ("save-checkpoint", """
        def save_checkpoint(model, optimizer, f):
            pass
        """),
}
