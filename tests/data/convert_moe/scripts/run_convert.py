# Runs llama.cpp's convert_hf_to_gguf.py with Debian 12's torch 1.13, as ../shared/testdata/convert/scripts/
# run_convert.py does (two float8 names torch 1.13 lacks, unused for pytorch_model.bin input; torch.load without
# its mmap= memory option), and one more change: with WS_NO_VOCAB=1 the model class's set_vocab writes nothing,
# for the checkpoints here without tokenizer files (the tokenizer is not what these files test).
import os, runpy, sys, torch
for n in ('float8_e4m3fn', 'float8_e5m2'):
    if not hasattr(torch, n): setattr(torch, n, torch.uint8)
_load = torch.load
def load(*a, **k):
    k.pop('mmap', None); return _load(*a, **k)
torch.load = load
sys.argv = [sys.argv[1]] + sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
if os.environ.get('WS_NO_VOCAB') == '1':
    import importlib.util
    spec = importlib.util.spec_from_file_location('convert_hf_to_gguf', sys.argv[0])
    mod = importlib.util.module_from_spec(spec); sys.modules['convert_hf_to_gguf'] = mod
    spec.loader.exec_module(mod)
    mod.Model.set_vocab = lambda self: None
    for cls in list(mod.Model._model_classes.values()):
        if 'set_vocab' in cls.__dict__: cls.set_vocab = lambda self: None
    mod.main()
else:
    runpy.run_path(sys.argv[0], run_name='__main__')
