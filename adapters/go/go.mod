module snapkv

go 1.21
