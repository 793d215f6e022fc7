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
