"""What the course does not teach, by name: topics a beginner asks about that are outside
it, each recognised by its words (English, code names, Chinese). A question about one of
them is answered "not in this course", naming the topic, unless the course answers it
plainly. Pure data and one lookup.
"""

from __future__ import annotations

import re

from gradtutor.i18n import Msg, msg

# (the topic's name, the words that name it: a regular expression, case aside)
TOPICS: tuple[tuple[Msg, str], ...] = (
    (msg("mixed precision (autocast, GradScaler)"),
     r"mixed.precision|\bamp\b|autocast|gradscaler|grad_scaler|float16|fp16|bf16|bfloat16|"
     r"half.precision|混合精度|半精度"),
    (msg("distributed training (DDP, several GPUs)"),
     r"\bddp\b|distributeddataparallel|dataparallel|distributed|multi.?gpu|multiple gpus|"
     r"several gpus|torchrun|nccl|all_reduce|allreduce|多卡|多 ?gpu|分布式"),
    (msg("torch.compile"), r"torch\.compile|\bcompile\(|inductor|torchdynamo|\bdynamo\b"),
    (msg("GPU memory and CUDA"),
     r"out of memory|\boom\b|cuda|\bgpu\b|显存|nvidia|\.cuda\(|empty_cache|memory_allocated"),
    (msg("installing PyTorch"),
     r"\binstall|pip install|conda|wheel|no module named|安装|版本不匹配"),
    (msg("image transforms and data augmentation (torchvision)"),
     r"torchvision|transforms?\.|augmentation|数据增强|imagefolder"),
    (msg("transformers and attention"),
     r"transformer|attention|\bbert\b|\bgpt|huggingface|hugging face|tokeniz|注意力"),
    (msg("convolutional networks"),
     r"\bconv2d\b|\bconv1d\b|convolution|\bcnn\b|卷积|resnet|pooling|maxpool"),
    (msg("recurrent networks (LSTM, GRU)"), r"\blstm\b|\bgru\b|\brnn\b|循环神经网络"),
    (msg("batch normalization"), r"batch.?norm|batchnorm|layernorm|layer.?norm|批归一化|归一化层"),
    (msg("exporting models (ONNX, TorchScript)"),
     r"\bonnx\b|torchscript|torch\.jit|jit\.trace|jit\.script|导出"),
    (msg("quantization and pruning"), r"quantiz|\bint8\b|prun(e|ing)|量化|剪枝"),
    (msg("TensorBoard and experiment logging"),
     r"tensorboard|summarywriter|wandb|weights & biases"),
    (msg("DataLoader worker processes"),
     r"num_workers|worker process|pin_memory|dataloader worker|workers? (hang|freez)"),
    (msg("learning-rate schedules"),
     r"\bscheduler\b|lr_scheduler|warmup|cosine anneal|onecycle|学习率调度"),
    (msg("hyperparameter search"), r"hyper.?parameter|grid search|optuna|超参数"),
    (msg("sparse tensors"), r"sparse tensor|to_sparse|稀疏"),
    (msg("higher-order gradients (Hessians)"), r"hessian|second.order|二阶导|海森"),
    (msg("weight initialization"),
     r"xavier|kaiming|glorot|nn\.init|init\.(normal|uniform|zeros|constant)_|权重初始化|初始化方法"),
    (msg("overfitting and regularization"),
     r"overfit|weight.decay|regulari[sz]|过拟合|正则化|权重衰减"),
    (msg("imbalanced classes"), r"imbalanc|class.weights?|focal loss|类别不平衡|不平衡|类别权重"),
    (msg("writing a Dataset"),
     r"__getitem__|__len__|custom dataset|own dataset|dataset class|自定义 ?dataset"),
    (msg("reproducibility and random seeds"),
     r"reproducib|determinis|manual_seed|random seed|cudnn\.benchmark|复现|随机种子"),
    (msg("early stopping"), r"early.?stop|早停"),
    (msg("custom autograd Functions"), r"autograd\.function|custom function|def backward\(ctx|"
     r"ctx\.save_for_backward|自定义.*function"),
)
_COMPILED = tuple((name, re.compile(words, re.IGNORECASE)) for name, words in TOPICS)


def topic_of(question: str) -> Msg | None:
    """The outside topic the question names, if any (the first in the table)."""
    return next((name for name, words in _COMPILED if words.search(question)), None)
